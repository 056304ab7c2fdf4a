#include "controller/fleet/clock_sync.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

// An exchange with an agent whose clock is `offset` ahead, a one-way delay of `out` to the
// agent and `back` from it, and `work` ns spent in the agent.
ClockSample Exchange(int64_t t0, int64_t offset, int64_t out, int64_t back, int64_t work = 0) {
  ClockSample s;
  s.t0 = t0;
  s.t1 = t0 + out + offset;
  s.t2 = s.t1 + work;
  s.t3 = t0 + out + work + back;
  return s;
}

TEST(EstimateClock, AgentAheadGivesPositiveOffset) {
  const ClockEstimate e = EstimateClock({Exchange(1'000'000, 5'000'000, 100, 100)});
  EXPECT_EQ(e.offset_nanos, 5'000'000);
  EXPECT_EQ(e.rtt_nanos, 200);
}

TEST(EstimateClock, AgentBehindGivesNegativeOffset) {
  const ClockEstimate e = EstimateClock({Exchange(1'000'000'000, -7'000, 300, 300)});
  EXPECT_EQ(e.offset_nanos, -7'000);
}

TEST(EstimateClock, RoundTripLeavesOutTheAgentsOwnTime) {
  const ClockEstimate e = EstimateClock({Exchange(0, 0, 400, 600, 1'000'000)});
  EXPECT_EQ(e.rtt_nanos, 1'000);
  EXPECT_EQ(e.offset_nanos, -100);  // asymmetric delay shows up as half its difference
}

TEST(EstimateClock, PicksTheSampleWithTheSmallestRoundTrip) {
  // Only the fast, symmetric exchange shows the true offset of 1 ms; queueing on one leg
  // skews the slow ones.
  const std::vector<ClockSample> samples = {
      Exchange(0, 1'000'000, 50'000, 500),
      Exchange(1'000'000, 1'000'000, 200, 200, 30'000),
      Exchange(2'000'000, 1'000'000, 500, 90'000),
  };
  const ClockEstimate e = EstimateClock(samples);
  EXPECT_EQ(e.rtt_nanos, 400);
  EXPECT_EQ(e.offset_nanos, 1'000'000);
}

TEST(EstimateClock, PicksTheFastestSampleWhereverItIs) {
  for (size_t fast = 0; fast < 3; ++fast) {
    std::vector<ClockSample> samples;
    for (size_t i = 0; i < 3; ++i) {
      const int64_t t0 = static_cast<int64_t>(i) * 1'000'000;
      samples.push_back(i == fast ? Exchange(t0, 42, 10, 10) : Exchange(t0, 42, 10'000, 20));
    }
    SCOPED_TRACE(fast);
    EXPECT_EQ(EstimateClock(samples).rtt_nanos, 20);
    EXPECT_EQ(EstimateClock(samples).offset_nanos, 42);
  }
}

TEST(EstimateClock, UncertaintyIsHalfTheRoundTrip) {
  const ClockEstimate e = EstimateClock({Exchange(0, 123, 3'000, 5'000)});
  EXPECT_EQ(e.rtt_nanos, 8'000);
  EXPECT_EQ(e.uncertainty_nanos, 4'000);
  // The true offset lies within the stated bound.
  EXPECT_LE(std::abs(e.offset_nanos - 123), e.uncertainty_nanos);
}

TEST(EstimateClock, NegativeRoundTripIsClampedToZero) {
  // An agent reporting more time inside than the whole exchange took.
  ClockSample s{0, 10, 1'000, 500};
  const ClockEstimate e = EstimateClock({s});
  EXPECT_EQ(e.rtt_nanos, 0);
  EXPECT_EQ(e.uncertainty_nanos, 0);
}

TEST(BracketPhase, TheOffsetBeforeWithTheMovementAddedToTheUncertainty) {
  ClockEstimate before, after;
  before.offset_nanos = 1'000'000;
  before.uncertainty_nanos = 40'000;
  before.rtt_nanos = 80'000;
  after.offset_nanos = 1'250'000;  // The agent's clock gained 250 us during the phase.
  after.uncertainty_nanos = 60'000;
  const ClockEstimate phase = BracketPhase(before, after);
  EXPECT_EQ(phase.offset_nanos, 1'000'000);
  EXPECT_EQ(phase.rtt_nanos, 80'000);
  EXPECT_EQ(phase.moved_nanos, 250'000);
  EXPECT_EQ(phase.uncertainty_nanos, 60'000 + 250'000);
  // A step back counts as much as one forward.
  after.offset_nanos = -4'000'000'000;
  EXPECT_EQ(BracketPhase(before, after).uncertainty_nanos, 60'000 + 4'001'000'000);
}

}  // namespace
}  // namespace stormark::controller
