#include "controller/fleet/discovery.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

TEST(HostsFromInventory, IniTakesTheStormarkGroupWithItsChildren) {
  auto hosts = HostsFromInventory(R"(
# comment
web1

[stormark_agents:children]
nvme_hosts

[stormark_agents]
db1.example.com ansible_host=10.0.0.11
db2 stormark_port=7421 stormark_target=nvme

[nvme_hosts]
db3 ansible_host=fe80::1

[stormark_agents:vars]
stormark_targets={"scratch": {"dir": "/srv"}}
)",
                                  "hosts.ini");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  ASSERT_EQ(hosts->size(), 3u);
  EXPECT_EQ((*hosts)[0].name, "db1.example.com");
  EXPECT_EQ((*hosts)[0].address, "10.0.0.11:7420");
  EXPECT_EQ((*hosts)[0].tls_name, "db1.example.com");
  EXPECT_EQ((*hosts)[1].address, "db2:7421");
  EXPECT_EQ((*hosts)[1].target, "nvme");
  EXPECT_EQ((*hosts)[2].address, "[fe80::1]:7420");
}

TEST(HostsFromInventory, WithoutTheGroupEveryHostIsTaken) {
  auto hosts = HostsFromInventory("a\n[g]\nb\n", "hosts.ini");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  ASSERT_EQ(hosts->size(), 2u);
}

TEST(HostsFromInventory, YamlInventory) {
  auto hosts = HostsFromInventory(R"(all:
  hosts:
    other:
  children:
    stormark_agents:
      hosts:
        db1: {ansible_host: 10.0.0.1, stormark_port: 7000}
        db2:
)",
                                  "hosts.yml");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  ASSERT_EQ(hosts->size(), 2u);
  EXPECT_EQ((*hosts)[0].address, "10.0.0.1:7000");
  EXPECT_EQ((*hosts)[1].address, "db2:7420");
}

TEST(HostsFromInventory, BadInputIsOneLineNamingTheFile) {
  auto hosts = HostsFromInventory("[broken\n", "hosts.ini");
  ASSERT_FALSE(hosts.ok());
  EXPECT_THAT(hosts.status().message(), HasSubstr("hosts.ini:1"));
  hosts = HostsFromInventory("all: [1, 2\n", "hosts.yml");
  ASSERT_FALSE(hosts.ok());
  EXPECT_THAT(hosts.status().message(), HasSubstr("hosts.yml:"));
  hosts = HostsFromInventory("# nothing\n", "hosts.ini");
  ASSERT_FALSE(hosts.ok());
  hosts = HostsFromInventory("h ansible_host=x stormark_port=99999\n", "hosts.ini");
  ASSERT_FALSE(hosts.ok());
  EXPECT_THAT(hosts.status().message(), HasSubstr("port"));
}

TEST(HostsFromDns, EveryAddressOfTheNameIsAHostNamedForTls) {
  auto hosts = HostsFromDns("localhost:7555");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  ASSERT_FALSE(hosts->empty());
  bool v4 = false;
  for (const HostPlan& host : *hosts) {
    EXPECT_EQ(host.tls_name, "localhost");
    v4 = v4 || host.address == "127.0.0.1:7555";
  }
  EXPECT_TRUE(v4);
  EXPECT_FALSE(HostsFromDns("no-such-host.invalid:7420").ok());
  EXPECT_EQ(HostsFromDns("bad name:x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GatherHosts, DuplicateNamesAreRefused) {
  std::vector<HostPlan> hosts = {{"a", "a:1", {}, "", ""}, {"a", "a:2", {}, "", ""}};
  EXPECT_EQ(GatherHosts(hosts, "", "").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stormark::controller
