#include "agent/targets/net/net_target.h"

#include <string>

#include "agent/host/sysinfo.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Port 1 on loopback: nothing listens there, so a connection is refused at once.
AgentConfig Unreachable() {
  auto config = ParseAgentConfig(
      "targets:\n"
      "  n: {nbd: nbd://127.0.0.1:1/e, disposable: true}\n"
      "  i: {iscsi: iscsi://127.0.0.1:1/iqn.2003-01.org.example:d/0, connect_timeout: 1s}\n",
      "agent.yaml");
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : AgentConfig();
}

TEST(ReadNetTargetFacts, AnNbdServerNotReachedIsDescribedByItsTransportAndEndpoint) {
  const AgentConfig config = Unreachable();
  ASSERT_NE(config.FindTarget("n"), nullptr);
  const stormark::v1::TargetInfo info = ReadTargetFacts(*config.FindTarget("n"));
  EXPECT_EQ(info.kind(), "nbd");
  EXPECT_EQ(info.transport(), "NBD");
  EXPECT_EQ(info.transport_detail(), "user-space NBD client to 127.0.0.1:1 export 'e'");
  EXPECT_TRUE(info.disposable());
  EXPECT_EQ(info.size_bytes(), 0u);  // Never reached.
}

TEST(ReadNetTargetFacts, AnIscsiTargetNotReachedIsDescribedByItsTransportAndPortal) {
  const AgentConfig config = Unreachable();
  ASSERT_NE(config.FindTarget("i"), nullptr);
  const stormark::v1::TargetInfo info = ReadTargetFacts(*config.FindTarget("i"));
  EXPECT_EQ(info.transport(), "iSCSI");
  EXPECT_THAT(info.transport_detail(), StartsWith("user-space iSCSI initiator to 127.0.0.1"));
  EXPECT_THAT(info.transport_detail(), HasSubstr("iqn.2003-01.org.example:d LUN 0"));
  EXPECT_FALSE(info.disposable());
  EXPECT_EQ(info.size_bytes(), 0u);
}

}  // namespace
}  // namespace stormark::agent
