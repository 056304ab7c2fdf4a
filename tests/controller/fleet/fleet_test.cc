// Fleet driving real agents in this process, over loopback TCP.
#include "controller/fleet/fleet.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/version.h"
#include "controller/fleet/packed_series.h"
#include "fmt/format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_agents.h"

namespace stormark::controller {
namespace {

using stormark::v1::StreamSpec;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr int64_t kMs = 1'000'000;

class FleetTest : public AgentsTest {
 protected:
  // A fleet of `agents` fresh agents, plus `unreachable` hosts where nothing listens.
  std::unique_ptr<Fleet> MakeFleet(int agents, int unreachable = 0,
                                   FleetOptions options = FleetOptions()) {
    std::vector<std::unique_ptr<AgentClient>> clients;
    for (int i = 0; i < agents; ++i) {
      agent::AgentServer* server = StartAgent();
      if (server == nullptr) return nullptr;
      clients.push_back(ClientFor(*server));
    }
    for (int i = 0; i < unreachable; ++i) {
      const std::string address = ClosedPort();
      clients.push_back(std::make_unique<AgentClient>(address, AgentClient::MakeChannel(address),
                                                      common::SystemClock()));
    }
    return std::make_unique<Fleet>(std::move(clients), common::SystemClock(), options);
  }
};

TEST_F(FleetTest, ConnectAllConnectsAndSyncsEveryAgent) {
  auto fleet = MakeFleet(2);
  ASSERT_NE(fleet, nullptr);
  const auto statuses = fleet->ConnectAll();
  ASSERT_EQ(statuses.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(statuses[i].ok()) << statuses[i];
    EXPECT_EQ(fleet->host_error(i), "");
    EXPECT_GT(fleet->client(i).clock().rtt_nanos, 0);
  }
}

TEST_F(FleetTest, RunPhaseOnTwoAgentsStartsThemTogether) {
  auto fleet = MakeFleet(2);
  ASSERT_NE(fleet, nullptr);
  for (const auto& s : fleet->ConnectAll()) ASSERT_TRUE(s.ok()) << s;

  std::atomic<int> updates{0};
  const PhaseOutcome outcome =
      fleet->RunPhase(StreamWrite(4 * kMiB, 256 * 1024), "fleet-test-1",
                      [&](size_t, const stormark::v1::RunUpdate::Progress&) { ++updates; });
  EXPECT_EQ(outcome.phase_id, "fleet-test-1");
  EXPECT_EQ(outcome.plan.name, "w");
  ASSERT_EQ(outcome.hosts.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const HostOutcome& host = outcome.hosts[i];
    SCOPED_TRACE(host.host);
    EXPECT_EQ(host.host, fleet->client(i).host());
    EXPECT_EQ(host.target, "scratch");
    EXPECT_EQ(host.error, "");
    ASSERT_TRUE(host.succeeded());
    EXPECT_EQ(host.result->bytes(), 4 * kMiB);
    EXPECT_EQ(host.result->ops(), 16u);
    // The agent waited for the common instant rather than starting at once.
    EXPECT_GE(host.result->start_unix_nanos() - host.clock.offset_nanos,
              outcome.start_at_unix_nanos - 5 * kMs);
    // Cleanup ran: the phase left nothing behind.
    EXPECT_EQ(CountEntries(TargetDir(i)), 0);
  }
  ASSERT_TRUE(outcome.start_skew_nanos.has_value());
  EXPECT_GE(*outcome.start_skew_nanos, 0);
  EXPECT_LT(*outcome.start_skew_nanos, 50 * kMs);
  EXPECT_GE(outcome.start_skew_uncertainty_nanos, 0);
}

TEST_F(FleetTest, EachHostThatRanIsHandedOnAsItsResultAndCleanupAreIn) {
  // The results store writes each row as it comes (phase_writer.h): what it is handed must be
  // the host's final outcome, once, and only for hosts that ran.
  auto fleet = MakeFleet(2, 1);
  ASSERT_NE(fleet, nullptr);
  fleet->ConnectAll();
  absl::Mutex mu;
  std::vector<std::pair<size_t, HostOutcome>> handed;
  const PhaseOutcome outcome =
      fleet->RunPhase(StreamWrite(2 * kMiB, 256 * 1024), "fleet-test-done", nullptr,
                      RunMode::kConcurrent, [&](size_t i, HostOutcome* host) {
                        // The agent's files are gone by now: its cleanup answered before.
                        EXPECT_EQ(CountEntries(TargetDir(i)), 0) << i;
                        absl::MutexLock lock(&mu);
                        handed.emplace_back(i, *host);
                      });
  absl::MutexLock lock(&mu);
  ASSERT_EQ(handed.size(), 2u);
  std::sort(handed.begin(), handed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(handed[i].first, i);
    const HostOutcome& host = handed[i].second;
    ASSERT_TRUE(host.succeeded()) << host.error;
    EXPECT_EQ(host.host, outcome.hosts[i].host);
    EXPECT_EQ(host.target, outcome.hosts[i].target);
    // Its series come packed (packed_series.h): put back, the result is the final one.
    EXPECT_THAT(host.result->series(), ::testing::IsEmpty());
    EXPECT_FALSE(host.packed_series.empty());
    EXPECT_EQ(host.own_series_samples, outcome.hosts[i].result->series_size());
    stormark::v1::PhaseResult whole = *host.result;
    ASSERT_TRUE(UnpackSeries(host.packed_series, &whole));
    EXPECT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(whole, *outcome.hosts[i].result));
    // What host_done left packed is back in the final outcome.
    EXPECT_TRUE(outcome.hosts[i].packed_series.empty());
    EXPECT_GT(outcome.hosts[i].result->series_size(), 0);
  }
  EXPECT_FALSE(outcome.hosts[2].error.empty());  // The unreachable host: never handed on.
}

TEST_F(FleetTest, AnArmedAgentAndAnOlderOneStartTogether) {
  // This build's agent arms its Run and waits for a Start; one that speaks protocol 1.2 is
  // given the instant in its Run, as before.
  agent::AgentServer* armed = StartAgent();
  agent::AgentServer* older = StartAgent({"scratch"}, MakeVersion(common::kProtocolMajor, 2));
  ASSERT_NE(armed, nullptr);
  ASSERT_NE(older, nullptr);
  std::vector<std::unique_ptr<AgentClient>> clients;
  clients.push_back(ClientFor(*armed));
  clients.push_back(ClientFor(*older));
  Fleet fleet(std::move(clients), common::SystemClock(), FleetOptions());
  for (const auto& s : fleet.ConnectAll()) ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(fleet.client(0).arms_runs());
  EXPECT_FALSE(fleet.client(1).arms_runs());
  for (int phase = 0; phase < 2; ++phase) {
    const PhaseOutcome outcome =
        fleet.RunPhase(StreamWrite(2 * kMiB, 256 * 1024), fmt::format("mixed-{}", phase), nullptr);
    for (size_t i = 0; i < 2; ++i) {
      const HostOutcome& host = outcome.hosts[i];
      SCOPED_TRACE(host.host);
      ASSERT_TRUE(host.succeeded()) << host.error;
      EXPECT_EQ(host.result->bytes(), 2 * kMiB);
      EXPECT_GE(host.result->start_unix_nanos() - host.clock.offset_nanos,
                outcome.start_at_unix_nanos - 5 * kMs);
      EXPECT_LT(host.result->start_late_nanos(), 100 * kMs);
      EXPECT_EQ(CountEntries(TargetDir(i)), 0);
    }
    ASSERT_TRUE(outcome.start_skew_nanos.has_value());
    EXPECT_LT(*outcome.start_skew_nanos, 50 * kMs);
  }
}

TEST_F(FleetTest, UnreachableHostBecomesARowAndTheOthersGoOn) {
  auto fleet = MakeFleet(1, 1);
  ASSERT_NE(fleet, nullptr);
  const auto statuses = fleet->ConnectAll();
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_TRUE(statuses[0].ok()) << statuses[0];
  EXPECT_EQ(statuses[1].code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(fleet->host_error(1), HasSubstr("unreachable"));

  const PhaseOutcome outcome =
      fleet->RunPhase(StreamWrite(1 * kMiB, 1 * kMiB), "fleet-test-2", nullptr);
  ASSERT_EQ(outcome.hosts.size(), 2u);
  EXPECT_TRUE(outcome.hosts[0].succeeded());
  EXPECT_EQ(outcome.hosts[0].result->bytes(), 1 * kMiB);
  EXPECT_FALSE(outcome.hosts[1].succeeded());
  EXPECT_FALSE(outcome.hosts[1].result.has_value());
  EXPECT_EQ(outcome.hosts[1].host, fleet->client(1).host());
  EXPECT_EQ(outcome.hosts[1].error, fleet->host_error(1));
  ASSERT_TRUE(outcome.start_skew_nanos.has_value());
  EXPECT_EQ(*outcome.start_skew_nanos, 0);  // one host started: no spread
}

TEST_F(FleetTest, UnknownTargetFailsThatHostBeforeThePhase) {
  auto fleet = MakeFleet(1);
  ASSERT_NE(fleet, nullptr);
  for (const auto& s : fleet->ConnectAll()) ASSERT_TRUE(s.ok()) << s;
  PhasePlan plan = StreamWrite(1 * kMiB, 1 * kMiB);
  plan.target = "nvme";
  const PhaseOutcome outcome = fleet->RunPhase(plan, "fleet-test-3", nullptr);
  ASSERT_EQ(outcome.hosts.size(), 1u);
  EXPECT_FALSE(outcome.hosts[0].result.has_value());
  EXPECT_EQ(outcome.hosts[0].target, "nvme");
  EXPECT_THAT(outcome.hosts[0].error, HasSubstr("no target 'nvme'"));
  EXPECT_FALSE(outcome.start_skew_nanos.has_value());
}

TEST_F(FleetTest, AfterAbortAllPhasesDoNotRun) {
  auto fleet = MakeFleet(1);
  ASSERT_NE(fleet, nullptr);
  for (const auto& s : fleet->ConnectAll()) ASSERT_TRUE(s.ok()) << s;
  fleet->AbortAll();
  EXPECT_TRUE(fleet->aborted());
  const PhaseOutcome outcome =
      fleet->RunPhase(StreamWrite(1 * kMiB, 1 * kMiB), "fleet-test-4", nullptr);
  ASSERT_EQ(outcome.hosts.size(), 1u);
  EXPECT_FALSE(outcome.hosts[0].result.has_value());
  EXPECT_THAT(outcome.hosts[0].error, HasSubstr("interrupted"));
  EXPECT_EQ(CountEntries(TargetDir(0)), 0);
}

TEST_F(FleetTest, WithFailFastTheFirstFailureStopsTheOthersAndLaterPhases) {
  FleetOptions options;
  options.fail_fast = true;
  auto fleet = MakeFleet(2, 0, options);
  ASSERT_NE(fleet, nullptr);
  for (const auto& s : fleet->ConnectAll()) ASSERT_TRUE(s.ok()) << s;
  PhasePlan plan = StreamWrite(1 * kMiB, 1 * kMiB);
  plan.target = "scratch";
  const PhaseOutcome outcome = fleet->RunPhase(plan, "fleet-test-5", nullptr);
  ASSERT_EQ(outcome.hosts.size(), 2u);
  EXPECT_TRUE(outcome.hosts[0].succeeded()) << outcome.hosts[0].error;
  EXPECT_EQ(fleet->stopped(), "");  // Nothing failed yet.

  plan.target = "nope";
  const PhaseOutcome failed = fleet->RunPhase(plan, "fleet-test-6", nullptr);
  // Whichever host failed first stopped the run; the other failed too, or was not run.
  EXPECT_THAT(failed.hosts[0].error + failed.hosts[1].error, HasSubstr("no target 'nope'"));
  EXPECT_THAT(fleet->stopped(), HasSubstr("--fail-fast: stopped the run after host"));
  EXPECT_TRUE(fleet->halted());
  EXPECT_FALSE(fleet->aborted());  // Not an interrupt.

  plan.target = "scratch";
  const PhaseOutcome later = fleet->RunPhase(plan, "fleet-test-7", nullptr);
  for (const HostOutcome& host : later.hosts) {
    EXPECT_FALSE(host.result.has_value());
    EXPECT_THAT(host.error, HasSubstr("not run: --fail-fast"));
  }
  EXPECT_EQ(CountEntries(TargetDir(0)), 0);
  EXPECT_EQ(CountEntries(TargetDir(1)), 0);
}

TEST_F(FleetTest, WithoutFailFastAFailedHostDoesNotStopTheRun) {
  auto fleet = MakeFleet(1);
  ASSERT_NE(fleet, nullptr);
  for (const auto& s : fleet->ConnectAll()) ASSERT_TRUE(s.ok()) << s;
  PhasePlan plan = StreamWrite(1 * kMiB, 1 * kMiB);
  plan.target = "nope";
  fleet->RunPhase(plan, "fleet-test-8", nullptr);
  EXPECT_EQ(fleet->stopped(), "");
  EXPECT_FALSE(fleet->halted());
}

TEST_F(FleetTest, APhasePastItsDeadlineIsAbortedOnThatHostWithTheReason) {
  FleetOptions options;
  options.heartbeat.interval_nanos = 100 * kMs;  // Deadlines are checked every round.
  options.heartbeat.timeout_nanos = 10'000 * kMs;
  auto fleet = MakeFleet(1, 0, options);
  ASSERT_NE(fleet, nullptr);
  for (const auto& s : fleet->ConnectAll()) ASSERT_TRUE(s.ok()) << s;
  // Far more than 200 ms of writing, which checks for an abort between blocks.
  PhasePlan plan = StreamWrite(4096 * kMiB, 64 * 1024);
  plan.deadline_nanos = 200 * kMs;
  const PhaseOutcome outcome = fleet->RunPhase(plan, "fleet-test-9", nullptr);
  ASSERT_EQ(outcome.hosts.size(), 1u);
  EXPECT_FALSE(outcome.hosts[0].succeeded());
  EXPECT_THAT(outcome.hosts[0].error, HasSubstr("phase deadline: ran "));
  EXPECT_THAT(outcome.hosts[0].error, HasSubstr("past its deadline of 0.2 s"));
}

}  // namespace
}  // namespace stormark::controller
