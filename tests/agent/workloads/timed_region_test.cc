#include "agent/workloads/timed_region.h"

#include <thread>

#include "common/clock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

TEST(TimedRegion, RestartMovesTheStartBeforeAnyRecorder) {
  const common::Clock& clock = common::SystemClock();
  common::RecorderSet recorders(clock.MonotonicNanos());
  TimedRegion region(clock, recorders);
  const TimedRegion::Span first = region.span();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(region.Restart());
  const TimedRegion::Span second = region.span();
  EXPECT_GE(second.start_mono - first.start_mono, 20'000'000);
  EXPECT_GE(second.start_unix - first.start_unix, 20'000'000);
  // The recorders' intervals count from the new start.
  EXPECT_EQ(recorders.start_mono_nanos(), second.start_mono);
}

TEST(TimedRegion, RestartIsRefusedOnceARecorderExists) {
  const common::Clock& clock = common::SystemClock();
  common::RecorderSet recorders(clock.MonotonicNanos());
  TimedRegion region(clock, recorders);
  const int64_t start = region.start_mono();
  recorders.Add();
  EXPECT_FALSE(region.Restart());
  EXPECT_EQ(region.start_mono(), start);
  EXPECT_EQ(recorders.start_mono_nanos(), start);
}

TEST(TimedRegion, CloseFreezesTheEnd) {
  const common::Clock& clock = common::SystemClock();
  common::RecorderSet recorders(clock.MonotonicNanos());
  TimedRegion region(clock, recorders);
  region.Close();
  const TimedRegion::Span closed = region.span();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  region.Close();  // A second close changes nothing.
  EXPECT_EQ(region.span().end_mono, closed.end_mono);
  EXPECT_FALSE(region.Restart());
}

}  // namespace
}  // namespace stormark::agent
