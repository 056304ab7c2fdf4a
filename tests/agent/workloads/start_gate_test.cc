#include "agent/workloads/start_gate.h"

#include <future>
#include <thread>

#include "common/clock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

struct Gate {
  const common::Clock& clock = common::SystemClock();
  common::RecorderSet recorders{clock.MonotonicNanos()};
  TimedRegion region{clock, recorders};
  std::atomic<bool> cancelled{false};
  StartGate gate{clock, region, cancelled};
};

TEST(StartGate, OpensTheRegionAtTheInstantAndRunsItsHookOnTheRunsThread) {
  Gate g;
  auto waiter = std::async(std::launch::async, [&] { return g.gate.AwaitStart(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(g.gate.begun());  // Not before it is opened.
  const int64_t instant = g.clock.NowUnixNanos() + 50'000'000;
  std::thread::id hook_thread;
  g.gate.Open(instant, [&] { hook_thread = std::this_thread::get_id(); });
  ASSERT_TRUE(waiter.get());
  EXPECT_TRUE(g.gate.begun());
  const TimedRegion::Span span = g.region.span();
  EXPECT_GE(span.start_unix, instant);
  EXPECT_EQ(g.gate.start_late_nanos(), span.start_unix - instant);
  EXPECT_LT(g.gate.start_late_nanos(), 50'000'000);
  EXPECT_NE(hook_thread, std::thread::id());
  EXPECT_NE(hook_thread, std::this_thread::get_id());
}

TEST(StartGate, AnInstantPassedAlreadyBeginsAtOnceAndSaysHowLate) {
  Gate g;
  const int64_t instant = g.clock.NowUnixNanos() - 30'000'000;
  g.gate.Open(instant);
  ASSERT_TRUE(g.gate.AwaitStart());
  EXPECT_GE(g.gate.start_late_nanos(), 30'000'000);
}

TEST(StartGate, AnInstantOfZeroBeginsAtOnceAndIsNotLate) {
  Gate g;
  auto waiter = std::async(std::launch::async, [&] { return g.gate.AwaitStart(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  g.gate.Open(0);
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(waiter.get());
  EXPECT_EQ(g.gate.start_late_nanos(), 0);
}

TEST(StartGate, IsReadyOnceTheRunsThreadWaitsAtIt) {
  Gate g;
  EXPECT_FALSE(g.gate.AwaitReady(10'000'000));  // Nobody waits yet.
  EXPECT_FALSE(g.gate.ready());
  auto waiter = std::async(std::launch::async, [&] { return g.gate.AwaitStart(); });
  ASSERT_TRUE(g.gate.AwaitReady(5'000'000'000));
  EXPECT_TRUE(g.gate.ready());
  EXPECT_FALSE(g.gate.begun());  // Ready is not begun: the instant is still to come.
  g.gate.Open(0);
  EXPECT_TRUE(waiter.get());
}

TEST(StartGate, ARunThatEndsBeforeItWaitsIsResolvedButNotReady) {
  Gate g;
  auto run = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    g.gate.RunEnded();  // A workload that could not start its threads returns here.
  });
  ASSERT_TRUE(g.gate.AwaitReady(5'000'000'000));
  EXPECT_FALSE(g.gate.ready());
  run.get();
}

TEST(StartGate, CalledOffNeverBegins) {
  Gate g;
  auto waiter = std::async(std::launch::async, [&] { return g.gate.AwaitStart(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  bool hook_ran = false;
  g.gate.CallOff();
  g.gate.Open(g.clock.NowUnixNanos(), [&] { hook_ran = true; });  // Too late: it counts once.
  EXPECT_FALSE(waiter.get());
  EXPECT_FALSE(g.gate.begun());
  EXPECT_FALSE(hook_ran);
}

TEST(StartGate, ACancelBeforeTheInstantStopsTheWaitWithoutARegion) {
  Gate g;
  const int64_t region_start = g.region.start_mono();
  g.gate.Open(g.clock.NowUnixNanos() + 30'000'000'000);  // Far ahead.
  auto waiter = std::async(std::launch::async, [&] { return g.gate.AwaitStart(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const int64_t cancelled_at = g.clock.MonotonicNanos();
  g.cancelled = true;
  EXPECT_FALSE(waiter.get());
  // Within the gate's poll step, not at the far instant.
  EXPECT_LT(g.clock.MonotonicNanos() - cancelled_at, 1'000'000'000);
  EXPECT_FALSE(g.gate.begun());
  EXPECT_EQ(g.region.start_mono(), region_start);
}

TEST(StartGate, ARegionThatCannotRestartDoesNotBegin) {
  Gate g;
  g.recorders.Add();  // Something was recorded before the instant: the run is not clean.
  g.gate.Open(g.clock.NowUnixNanos());
  EXPECT_FALSE(g.gate.AwaitStart());
  EXPECT_FALSE(g.gate.begun());
}

}  // namespace
}  // namespace stormark::agent
