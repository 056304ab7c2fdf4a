// Real agents in this process, for controller tests: each listens on 127.0.0.1 with its
// own scratch directory on disk (/var/tmp, since /tmp may be tmpfs).
#ifndef STORMARK_TESTS_CONTROLLER_TEST_AGENTS_H_
#define STORMARK_TESTS_CONTROLLER_TEST_AGENTS_H_

#include <memory>
#include <string>
#include <vector>

#include "agent/rpc/server.h"
#include "common/clock.h"
#include "common/version.h"
#include "controller/fleet/agent_client.h"
#include "controller/fleet/fleet.h"
#include "gtest/gtest.h"
#include "stormark/v1/agent.pb.h"
#include "tests/controller/fake_agent.h"

namespace stormark::controller {

// Stops every agent and removes its directories in TearDown, whether or not the test passed.
class AgentsTest : public ::testing::Test {
 protected:
  void TearDown() override;

  // Starts an agent with one "dir" target per name, each on a fresh directory, claiming
  // `protocol`. Returns nullptr (and fails the test) if it cannot start.
  agent::AgentServer* StartAgent(const std::vector<std::string>& targets = {"scratch"},
                                 const stormark::v1::Version& protocol = common::OurProtocol());

  // A client for `server`, labelled with its address.
  std::unique_ptr<AgentClient> ClientFor(const agent::AgentServer& server) const;

  // Clients for a real agent (host 0) and for `fake` (host 1), which starts serving: an attack's
  // fleet of one honest host beside one that misbehaves. Empty when either cannot start.
  std::vector<std::unique_ptr<AgentClient>> RealAgentAndFake(FakeAgent& fake);

  // A phase "w" that writes `size` bytes with stream in blocks of `block_size`, with a progress
  // every 10 ms.
  static PhasePlan StreamWrite(uint64_t size, uint32_t block_size);

  // The directory of target `index` of agent `agent`.
  const std::string& TargetDir(size_t agent, size_t index = 0) const { return dirs_[agent][index]; }

  // Entries left in `dir` (not counting the directory itself).
  static int CountEntries(const std::string& dir);

  // "127.0.0.1:PORT" where nothing listens: a port the kernel just handed out and freed.
  static std::string ClosedPort();

  static stormark::v1::Version MakeVersion(uint32_t major, uint32_t minor);

 private:
  std::vector<std::unique_ptr<agent::AgentServer>> servers_;
  std::vector<std::vector<std::string>> dirs_;
};

}  // namespace stormark::controller

#endif  // STORMARK_TESTS_CONTROLLER_TEST_AGENTS_H_
