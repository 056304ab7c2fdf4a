#include "common/monotonic_cond_var.h"

#include <chrono>
#include <cstdint>
#include <thread>

#include "gtest/gtest.h"

namespace stormark::common {
namespace {

constexpr int64_t kMilli = 1'000'000;

// What one waiter and one notifier share.
struct Shared {
  absl::Mutex mu;
  MonotonicCondVar changed;
  bool ready ABSL_GUARDED_BY(mu) = false;
  int false_alarms ABSL_GUARDED_BY(mu) = 0;
};

int64_t MonotonicNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TEST(MonotonicCondVar, WaitForReturnsAtOnceWhenThePredicateHolds) {
  Shared s;
  absl::MutexLock lock(&s.mu);
  s.ready = true;
  const int64_t start = MonotonicNanos();
  EXPECT_TRUE(s.changed.WaitFor(s.mu, 10'000 * kMilli,
                                [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.ready; }));
  EXPECT_LT(MonotonicNanos() - start, 1'000 * kMilli);
}

TEST(MonotonicCondVar, WaitForTimesOutWithFalse) {
  Shared s;
  absl::MutexLock lock(&s.mu);
  const int64_t start = MonotonicNanos();
  EXPECT_FALSE(s.changed.WaitFor(s.mu, 50 * kMilli,
                                 [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.ready; }));
  EXPECT_GE(MonotonicNanos() - start, 50 * kMilli);
}

TEST(MonotonicCondVar, NotifiedWaiterSeesTheChangeAndHoldsTheMutex) {
  Shared s;
  std::thread notifier([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    {
      absl::MutexLock lock(&s.mu);
      ++s.false_alarms;  // A notification whose predicate is still false: waited through.
    }
    s.changed.NotifyAll();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    {
      absl::MutexLock lock(&s.mu);
      s.ready = true;
    }
    s.changed.NotifyAll();
  });
  {
    absl::MutexLock lock(&s.mu);
    s.changed.Wait(s.mu, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.ready; });
    s.mu.AssertHeld();
    EXPECT_TRUE(s.ready);
    EXPECT_EQ(s.false_alarms, 1);
  }
  notifier.join();
}

TEST(MonotonicCondVar, WaitForEndsEarlyWhenNotified) {
  Shared s;
  std::thread notifier([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    absl::MutexLock lock(&s.mu);
    s.ready = true;
    s.changed.NotifyAll();  // With the mutex held, as PhaseRunner does.
  });
  const int64_t start = MonotonicNanos();
  {
    absl::MutexLock lock(&s.mu);
    EXPECT_TRUE(s.changed.WaitFor(s.mu, 30'000 * kMilli,
                                  [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.ready; }));
  }
  EXPECT_LT(MonotonicNanos() - start, 10'000 * kMilli);
  notifier.join();
}

}  // namespace
}  // namespace stormark::common
