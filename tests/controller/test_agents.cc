#include "tests/controller/test_agents.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "common/strings.h"

namespace stormark::controller {

void AgentsTest::TearDown() {
  servers_.clear();  // Stops the agents before their directories go.
  for (const auto& dirs : dirs_) {
    for (const std::string& dir : dirs) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      EXPECT_FALSE(ec) << "cannot remove " << dir << ": " << ec.message();
    }
  }
  dirs_.clear();
}

agent::AgentServer* AgentsTest::StartAgent(const std::vector<std::string>& targets,
                                           const stormark::v1::Version& protocol) {
  agent::AgentServerOptions options;
  // Loopback TCP, as a controller reaches a remote agent; plain text, so --insecure.
  options.listen = "127.0.0.1:0";
  options.insecure = true;
  options.protocol = protocol;
  std::vector<std::string> dirs;
  for (const std::string& name : targets) {
    std::string pattern = "/var/tmp/stormark-ctl-test-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed";
      break;
    }
    dirs.push_back(pattern);
    options.config.targets.push_back(agent::TargetConfig{name, "dir", pattern});
  }
  dirs_.push_back(dirs);
  if (dirs.size() != targets.size()) return nullptr;
  auto server = agent::AgentServer::Start(std::move(options), common::SystemClock());
  if (!server.ok()) {
    ADD_FAILURE() << "cannot start an agent: " << server.status();
    return nullptr;
  }
  servers_.push_back(std::move(*server));
  return servers_.back().get();
}

std::unique_ptr<AgentClient> AgentsTest::ClientFor(const agent::AgentServer& server) const {
  return std::make_unique<AgentClient>(server.address(), AgentClient::MakeChannel(server.address()),
                                       common::SystemClock());
}

PhasePlan AgentsTest::StreamWrite(uint64_t size, uint32_t block_size) {
  PhasePlan plan;
  plan.name = "w";
  plan.spec.set_progress_interval_ms(10);
  stormark::v1::StreamSpec* s = plan.spec.mutable_stream();
  s->set_direction(stormark::v1::StreamSpec::WRITE);
  s->set_size_bytes(size);
  s->set_block_size(block_size);
  return plan;
}

std::vector<std::unique_ptr<AgentClient>> AgentsTest::RealAgentAndFake(FakeAgent& fake) {
  std::vector<std::unique_ptr<AgentClient>> clients;
  if (!fake.Serve()) return clients;
  agent::AgentServer* real = StartAgent();
  if (real == nullptr) return clients;
  clients.push_back(ClientFor(*real));
  clients.push_back(fake.Client());
  return clients;
}

int AgentsTest::CountEntries(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

std::string AgentsTest::ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);  // Never listened on, and now free: connecting is refused.
  return common::StrCat("127.0.0.1:", ntohs(addr.sin_port));
}

stormark::v1::Version AgentsTest::MakeVersion(uint32_t major, uint32_t minor) {
  stormark::v1::Version v;
  v.set_major(major);
  v.set_minor(minor);
  return v;
}

}  // namespace stormark::controller
