#include "bench/fleet_sim/timer_queue.h"

#include <time.h>

#include <string>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace stormark::fleet_sim {
namespace {

int64_t RealtimeNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

TEST(TimerQueue, RunsCallbacksInDeadlineOrderNotBeforeTheirDeadline) {
  TimerQueue timers;
  absl::Mutex mu;
  std::string order;
  int64_t ran_at[3] = {0, 0, 0};
  absl::Notification last;
  const int64_t now = RealtimeNanos();
  const int64_t at[3] = {now + 30'000'000, now + 10'000'000, now + 20'000'000};
  for (int i = 0; i < 3; ++i) {
    timers.At(at[i], [&, i] {
      absl::MutexLock lock(&mu);
      ran_at[i] = RealtimeNanos();
      order += static_cast<char>('a' + i);
      if (order.size() == 3) last.Notify();
    });
  }
  ASSERT_TRUE(last.WaitForNotificationWithTimeout(absl::Seconds(5)));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, "bca");
  for (int i = 0; i < 3; ++i) EXPECT_GE(ran_at[i], at[i]) << i;
}

TEST(TimerQueue, PastDeadlineRunsAtOnce) {
  TimerQueue timers;
  absl::Notification ran;
  timers.At(RealtimeNanos() - 1'000'000'000, [&] { ran.Notify(); });
  EXPECT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(1)));
}

TEST(TimerQueue, StopRunsWhatIsStillQueued) {
  TimerQueue timers;
  bool ran = false;
  timers.At(RealtimeNanos() + 3600'000'000'000, [&] { ran = true; });
  timers.Stop();
  EXPECT_TRUE(ran);
  bool after = false;
  timers.At(RealtimeNanos() + 3600'000'000'000, [&] { after = true; });
  EXPECT_TRUE(after);  // Run on the caller's thread once stopped.
}

}  // namespace
}  // namespace stormark::fleet_sim
