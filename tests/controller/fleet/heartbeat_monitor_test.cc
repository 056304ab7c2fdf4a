#include "controller/fleet/heartbeat_monitor.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_agents.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;
const std::vector<std::string> kNames = {"db1:7420", "db2:7420"};

TEST(HeartbeatTracker, AHostThatAnswersIsNeverExpired) {
  HeartbeatTracker tracker(2, 10 * kSecond);
  tracker.Start(0, 0);
  for (int64_t t = 2; t <= 60; t += 2) {
    tracker.Answered(0, t * kSecond);
    EXPECT_TRUE(tracker.TakeExpired(t * kSecond, kNames).empty()) << t;
  }
}

TEST(HeartbeatTracker, ASilentHostExpiresAfterTheTimeoutOnceWithTheReason) {
  HeartbeatTracker tracker(2, 10 * kSecond);
  tracker.Start(0, 0);
  tracker.Start(1, 0);
  tracker.Answered(0, 4 * kSecond);
  tracker.Answered(1, 4 * kSecond);
  tracker.Answered(1, 12 * kSecond);
  tracker.Failed(0, "Heartbeat timed out");
  EXPECT_TRUE(tracker.TakeExpired(13 * kSecond, kNames).empty());
  auto expired = tracker.TakeExpired(14 * kSecond, kNames);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first, 0u);
  EXPECT_EQ(expired[0].second,
            "no heartbeat from agent db1:7420 for 10.0 s (last error: Heartbeat timed out)");
  EXPECT_FALSE(tracker.watched(0));
  EXPECT_TRUE(tracker.TakeExpired(30 * kSecond, kNames).size() == 1);  // Host 1 now; 0 not again.
}

TEST(HeartbeatTracker, AnUnwatchedHostNeverExpires) {
  HeartbeatTracker tracker(2, 10 * kSecond);
  tracker.Start(1, 0);
  tracker.Stop(1);
  EXPECT_TRUE(tracker.TakeExpired(100 * kSecond, kNames).empty());
}

TEST(HeartbeatTracker, ALateAnswerDoesNotMoveTheLastHeardBackwards) {
  HeartbeatTracker tracker(1, 10 * kSecond);
  tracker.Start(0, 5 * kSecond);
  tracker.Answered(0, 3 * kSecond);  // An answer timed before Start (clock order of threads).
  auto expired = tracker.TakeExpired(15 * kSecond, kNames);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_THAT(expired[0].second, HasSubstr("for 10.0 s"));
}

TEST(HeartbeatTracker, TheControllersOwnStallIsNoHostsSilence) {
  HeartbeatTracker tracker(2, 10 * kSecond);
  tracker.Start(0, 0);
  tracker.Start(1, 0);
  tracker.Answered(1, 8 * kSecond);
  // The controller's rounds stopped for 7 s (stopped, swapping): at 12 s host 0 has been silent
  // 5 s of the controller's own looking, not 12.
  tracker.Forgive(7 * kSecond, 12 * kSecond);
  EXPECT_TRUE(tracker.TakeExpired(12 * kSecond, kNames).empty());
  // Never past now: host 1 is not heard from in the future.
  auto expired = tracker.TakeExpired(22 * kSecond, kNames);
  ASSERT_EQ(expired.size(), 2u);
  EXPECT_THAT(expired[0].second, HasSubstr("for 15.0 s"));
  EXPECT_THAT(expired[1].second, HasSubstr("for 10.0 s"));
}

TEST(HeartbeatSchedule, FirstHeartbeatsAreSpreadOverTheInterval) {
  EXPECT_EQ(FirstHeartbeatOffset(0, 4, 2 * kSecond), 0);
  EXPECT_EQ(FirstHeartbeatOffset(1, 4, 2 * kSecond), kSecond / 2);
  EXPECT_EQ(FirstHeartbeatOffset(3, 4, 2 * kSecond), 3 * kSecond / 2);
  EXPECT_LT(FirstHeartbeatOffset(9999, 10000, 2 * kSecond), 2 * kSecond);
  EXPECT_EQ(FirstHeartbeatOffset(0, 0, 2 * kSecond), 0);
}

class HeartbeatMonitorTest : public AgentsTest {};

// The monitor's thread held up inside a round (its tick, here; a stopped or swapped controller,
// or a lock, in life) for longer than the timeout: that time is the controller's own, and the
// agent that answered all along is not given up for it.
TEST_F(HeartbeatMonitorTest, AStallInsideARoundIsNoHostsSilence) {
  agent::AgentServer* server = StartAgent();
  ASSERT_NE(server, nullptr);
  std::unique_ptr<AgentClient> client = ClientFor(*server);
  ASSERT_TRUE(client->Connect().ok());
  HeartbeatOptions options;
  options.interval_nanos = 200'000'000;
  options.timeout_nanos = 1'000 * 1'000'000;
  std::atomic<int> lost{0};
  std::atomic<int> ticks{0};
  {
    HeartbeatMonitor monitor(
        {client.get()}, options, common::SystemClock(), [&](size_t, const std::string&) { ++lost; },
        [&] {
          // The fourth round stalls for three timeouts.
          if (++ticks == 4) std::this_thread::sleep_for(std::chrono::milliseconds(3000));
        });
    monitor.Watch(0, true);
    while (ticks < 12) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_GE(monitor.stalled_nanos(), 2 * kSecond);
  }
  EXPECT_EQ(lost, 0);
}

}  // namespace
}  // namespace stormark::controller
