#include "bench/fleet_sim/sim_server.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

#include "common/clock.h"
#include "common/strings.h"
#include "controller/fleet/agent_client.h"
#include "gtest/gtest.h"

namespace stormark::fleet_sim {
namespace {

using controller::AgentClient;

std::unique_ptr<AgentClient> ClientFor(int port) {
  auto client = AgentClient::ForAddress(common::StrCat("127.0.0.1:", port), common::SystemClock());
  EXPECT_TRUE(client.ok()) << client.status();
  return std::move(*client);
}

std::unique_ptr<SimServer> StartSim(SimServerOptions options) {
  std::string warning;
  auto sim = SimServer::Start(options, &warning);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return std::move(*sim);
}

TEST(SimServer, EachPortIsItsOwnAgent) {
  auto sim = StartSim({.agents = 3, .clock_offsets_nanos = {}});
  ASSERT_EQ(sim->ports().size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    auto client = ClientFor(sim->ports()[i]);
    ASSERT_TRUE(client->Connect().ok());
    EXPECT_EQ(client->info().hostname(), common::StrCat("sim-0000", i));
  }
}

TEST(SimServer, SyncClockShowsTheAgentsOffset) {
  auto sim = StartSim({.agents = 2, .clock_offsets_nanos = {0, 250'000'000}});
  auto client = ClientFor(sim->ports()[1]);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(client->SyncClock(4).ok());
  EXPECT_NEAR(static_cast<double>(client->clock().offset_nanos), 250e6, 20e6);
}

TEST(SimServer, RunStartsAtTheInstantAndEndsWithTheResult) {
  auto sim = StartSim({.agents = 1, .clock_offsets_nanos = {}});
  auto client = ClientFor(sim->ports()[0]);
  ASSERT_TRUE(client->Connect().ok());
  stormark::v1::PhaseSpec spec;
  spec.set_phase_id("run-1");
  spec.set_target("sink");
  spec.set_progress_interval_ms(100);
  spec.mutable_randio()->set_rw(stormark::v1::RandioSpec::RANDREAD);
  spec.mutable_randio()->set_rate_iops(100);
  spec.mutable_randio()->set_runtime_nanos(300'000'000);
  auto prepared = client->Prepare(spec);
  ASSERT_TRUE(prepared.ok()) << prepared.status();

  const int64_t start_at = common::SystemClock().NowUnixNanos() + 100'000'000;
  std::atomic<int> progress{0};
  auto result =
      client->Run("run-1", start_at, [&](const stormark::v1::RunUpdate::Progress&) { ++progress; });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), stormark::v1::PhaseResult::SUCCEEDED);
  EXPECT_GE(result->start_unix_nanos(), start_at);
  EXPECT_GE(result->start_late_nanos(), 0);
  EXPECT_LT(result->start_late_nanos(), 50'000'000);
  EXPECT_GE(result->end_unix_nanos() - result->start_unix_nanos(), 300'000'000);
  EXPECT_EQ(result->ops(), 30u);
  EXPECT_GE(progress.load(), 1);
  EXPECT_TRUE(client->Cleanup("run-1", 1000).ok());
}

TEST(SimServer, AnArmedRunWaitsForItsStart) {
  auto sim = StartSim({.agents = 1, .clock_offsets_nanos = {40'000'000}});
  auto client = ClientFor(sim->ports()[0]);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(client->SyncClock(4).ok());
  EXPECT_TRUE(client->arms_runs());
  stormark::v1::PhaseSpec spec;
  spec.set_phase_id("run-1");
  spec.set_target("sink");
  spec.mutable_randio()->set_rw(stormark::v1::RandioSpec::RANDREAD);
  spec.mutable_randio()->set_rate_iops(100);
  spec.mutable_randio()->set_runtime_nanos(200'000'000);
  ASSERT_TRUE(client->Prepare(spec).ok());

  // Nothing is armed yet: a Start is refused.
  absl::Notification refused;
  client->StartAsync("run-1", common::SystemClock().NowUnixNanos(),
                     [&](const common::Status& s, int64_t) {
                       EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
                       refused.Notify();
                     });
  ASSERT_TRUE(refused.WaitForNotificationWithTimeout(absl::Seconds(5)));

  absl::Notification armed, over;
  common::StatusOr<stormark::v1::PhaseResult> result = absl::UnknownError("no result");
  client->ArmAsync(
      "run-1", [&] { armed.Notify(); }, nullptr,
      [&](common::StatusOr<stormark::v1::PhaseResult> r) {
        result = std::move(r);
        over.Notify();
      });
  ASSERT_TRUE(armed.WaitForNotificationWithTimeout(absl::Seconds(5)));
  // Armed, it does not start by itself.
  EXPECT_FALSE(over.WaitForNotificationWithTimeout(absl::Milliseconds(300)));
  const int64_t start_at = common::SystemClock().NowUnixNanos() + 100'000'000;
  absl::Notification started;
  int64_t ahead = 0;
  client->StartAsync("run-1", start_at, [&](const common::Status& s, int64_t a) {
    EXPECT_TRUE(s.ok()) << s;
    ahead = a;
    started.Notify();
  });
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_GT(ahead, 50'000'000);  // It came well before the instant.
  ASSERT_TRUE(over.WaitForNotificationWithTimeout(absl::Seconds(5)));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), stormark::v1::PhaseResult::SUCCEEDED);
  // On the agent's clock, which runs 40 ms ahead.
  EXPECT_GE(result->start_unix_nanos() - client->clock().offset_nanos, start_at - 5'000'000);
  EXPECT_LT(result->start_late_nanos(), 50'000'000);
  EXPECT_EQ(result->ops(), 20u);
}

TEST(SimServer, RunOfAPhaseNotPreparedIsRefused) {
  auto sim = StartSim({.agents = 1, .clock_offsets_nanos = {}});
  auto client = ClientFor(sim->ports()[0]);
  ASSERT_TRUE(client->Connect().ok());
  auto result = client->Run("nothing", common::SystemClock().NowUnixNanos(), nullptr);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
}

TEST(SimServer, ShutdownEndsARunWaitingForItsStart) {
  auto sim = StartSim({.agents = 1, .clock_offsets_nanos = {}});
  auto client = ClientFor(sim->ports()[0]);
  ASSERT_TRUE(client->Connect().ok());
  stormark::v1::PhaseSpec spec;
  spec.set_phase_id("run-1");
  spec.set_target("sink");
  spec.mutable_randio()->set_rw(stormark::v1::RandioSpec::RANDREAD);
  ASSERT_TRUE(client->Prepare(spec).ok());
  absl::Notification over;
  client->RunAsync("run-1", common::SystemClock().NowUnixNanos() + 3600'000'000'000, nullptr,
                   [&](common::StatusOr<stormark::v1::PhaseResult> result) {
                     EXPECT_FALSE(result.ok());
                     over.Notify();
                   });
  absl::SleepFor(absl::Milliseconds(100));
  sim->Shutdown(100'000'000);
  EXPECT_TRUE(over.WaitForNotificationWithTimeout(absl::Seconds(5)));
}

}  // namespace
}  // namespace stormark::fleet_sim
