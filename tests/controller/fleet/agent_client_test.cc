// AgentClient against real agents in this process, over loopback TCP.
#include "controller/fleet/agent_client.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_agents.h"

namespace stormark::controller {
namespace {

using stormark::v1::PhaseResult;
using stormark::v1::StreamSpec;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kMs = 1'000'000;

using AgentClientTest = AgentsTest;

TEST_F(AgentClientTest, ConnectFetchesTheAgentsFacts) {
  agent::AgentServer* server = StartAgent({"scratch"});
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  EXPECT_EQ(client->host(), server->address());
  EXPECT_EQ(client->info().protocol().major(), common::kProtocolMajor);
  EXPECT_EQ(client->info().agent_version(), std::string(common::kSoftwareVersion));
  ASSERT_EQ(client->info().targets_size(), 1);
  EXPECT_EQ(client->info().targets(0).name(), "scratch");
  EXPECT_EQ(client->info().targets(0).path(), TargetDir(0));
}

TEST_F(AgentClientTest, SyncClockOnLoopbackFindsNoOffset) {
  agent::AgentServer* server = StartAgent();
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(client->SyncClock(8).ok());
  // Same host, same clock: only the measurement error remains.
  EXPECT_LT(std::abs(client->clock().offset_nanos), 5 * kMs);
  EXPECT_GT(client->clock().rtt_nanos, 0);
  EXPECT_LT(client->clock().rtt_nanos, 50 * kMs);
  EXPECT_EQ(client->clock().uncertainty_nanos, client->clock().rtt_nanos / 2);
}

TEST_F(AgentClientTest, RefiningTheClockKeepsTheShorterRoundTrip) {
  agent::AgentServer* server = StartAgent();
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(client->SyncClock(8).ok());
  for (int i = 0; i < 20; ++i) {
    const ClockEstimate before = client->clock();
    absl::Notification over;
    client->RefineClockAsync(1, [&](const common::Status& s) {
      EXPECT_TRUE(s.ok()) << s;
      over.Notify();
    });
    over.WaitForNotification();
    EXPECT_LE(client->clock().rtt_nanos, before.rtt_nanos);
    if (client->clock().rtt_nanos == before.rtt_nanos) {
      EXPECT_EQ(client->clock().offset_nanos, before.offset_nanos);
    }
  }
}

TEST_F(AgentClientTest, ResolveTargetWithoutANameTakesTheOnlyTarget) {
  agent::AgentServer* server = StartAgent({"fast"});
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  auto target = client->ResolveTarget("");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(*target, "fast");
  target = client->ResolveTarget("fast");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(*target, "fast");
}

TEST_F(AgentClientTest, CheckWorkloadRefusesWhatTheAgentCannotRun) {
  agent::AgentServer* server = StartAgent({"fast"});
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  EXPECT_TRUE(client->CheckWorkload("stream").ok());
  EXPECT_TRUE(client->CheckWorkload("bonnie").ok());
  EXPECT_TRUE(client->CheckWorkload("postmark").ok());
  const common::Status status = client->CheckWorkload("fio-9000");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("cannot run workload 'fio-9000'"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("it runs: bonnie, command, "));
}

TEST_F(AgentClientTest, ResolveTargetUnknownIsNotFoundListingTheTargets) {
  agent::AgentServer* server = StartAgent({"fast", "slow"});
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  auto target = client->ResolveTarget("nvme");
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kNotFound);
  const std::string message(target.status().message());
  EXPECT_THAT(message, StartsWith("host " + server->address() + ": "));
  EXPECT_THAT(message, HasSubstr("'nvme'"));
  EXPECT_THAT(message, HasSubstr("fast, slow"));
}

TEST_F(AgentClientTest, ResolveTargetWithoutANameNeedsASingleTarget) {
  agent::AgentServer* server = StartAgent({"fast", "slow"});
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  auto target = client->ResolveTarget("");
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(target.status().message()), HasSubstr("fast, slow"));
  auto slow = client->ResolveTarget("slow");
  ASSERT_TRUE(slow.ok());
  EXPECT_EQ(*slow, "slow");
}

TEST_F(AgentClientTest, ConnectRefusesAnAgentWithAnotherProtocolMajor) {
  agent::AgentServer* server = StartAgent({"scratch"}, MakeVersion(2, 0));
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  const common::Status status = client->Connect();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr(server->address()));
  EXPECT_THAT(message, HasSubstr("2.0"));
  EXPECT_THAT(message, HasSubstr("1.0"));
}

TEST_F(AgentClientTest, ConnectAcceptsAnotherProtocolMinor) {
  agent::AgentServer* server = StartAgent({"scratch"}, MakeVersion(common::kProtocolMajor, 7));
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  EXPECT_TRUE(client->Connect().ok());
  EXPECT_EQ(client->info().protocol().minor(), 7u);
}

TEST_F(AgentClientTest, ConnectToAClosedPortFailsQuicklyAsUnreachable) {
  const std::string address = ClosedPort();
  AgentClient client(address, AgentClient::MakeChannel(address), common::SystemClock());
  const auto begin = std::chrono::steady_clock::now();
  const common::Status status = client.Connect(10000);
  const auto took = std::chrono::steady_clock::now() - begin;
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()), HasSubstr("unreachable"));
  EXPECT_THAT(std::string(status.message()), HasSubstr(address));
  // A refused connection is an answer: no waiting for the deadline.
  EXPECT_LT(took, std::chrono::seconds(3));
}

TEST_F(AgentClientTest, PrepareRunCleanupWritesAndRemovesTheFile) {
  agent::AgentServer* server = StartAgent();
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(client->SyncClock(4).ok());

  stormark::v1::PhaseSpec spec;
  spec.set_phase_id("client-test-1");
  spec.set_target("scratch");
  spec.set_progress_interval_ms(10);
  StreamSpec* s = spec.mutable_stream();
  s->set_direction(StreamSpec::WRITE);
  s->set_size_bytes(2 << 20);
  s->set_block_size(64 << 10);
  ASSERT_TRUE(client->Prepare(spec).ok());

  auto result = client->Run("client-test-1", common::SystemClock().NowUnixNanos() + 20 * kMs,
                            [](const stormark::v1::RunUpdate::Progress&) {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), PhaseResult::SUCCEEDED);
  EXPECT_EQ(result->bytes(), 2u << 20);
  EXPECT_GT(CountEntries(TargetDir(0)), 0);

  ASSERT_TRUE(client->Cleanup("client-test-1").ok());
  EXPECT_EQ(CountEntries(TargetDir(0)), 0);
}

TEST_F(AgentClientTest, RunOfAnUnpreparedPhaseNamesTheHost) {
  agent::AgentServer* server = StartAgent();
  ASSERT_NE(server, nullptr);
  auto client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  auto result = client->Run("never-prepared", 0, nullptr);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              StartsWith("host " + server->address() + ": "));
}

}  // namespace
}  // namespace stormark::controller
