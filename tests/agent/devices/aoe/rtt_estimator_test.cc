#include "agent/devices/aoe/rtt_estimator.h"

#include "gtest/gtest.h"

namespace stormark::agent::aoe {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(RttEstimator, StartsFromTheInitialTimeout) {
  RttEstimator rtt(50 * kMs, 1 * kMs, 1000 * kMs);
  EXPECT_EQ(rtt.Timeout(1), 50 * kMs);
  EXPECT_EQ(rtt.samples(), 0u);
}

TEST(RttEstimator, FollowsJacobsonKarels) {
  RttEstimator rtt(50 * kMs, 0, 1000 * kMs);
  rtt.Sample(8 * kMs);
  EXPECT_EQ(rtt.srtt_nanos(), 8 * kMs);
  EXPECT_EQ(rtt.rttvar_nanos(), 4 * kMs);
  EXPECT_EQ(rtt.Timeout(1), 24 * kMs);  // srtt + 4 rttvar
  rtt.Sample(16 * kMs);
  EXPECT_EQ(rtt.srtt_nanos(), 9 * kMs);    // 7/8 * 8 + 1/8 * 16
  EXPECT_EQ(rtt.rttvar_nanos(), 5 * kMs);  // 3/4 * 4 + 1/4 * 8
  for (int i = 0; i < 200; ++i) rtt.Sample(2 * kMs);
  EXPECT_NEAR(rtt.srtt_nanos(), 2 * kMs, kMs / 10);
  EXPECT_LT(rtt.rttvar_nanos(), kMs / 10);
}

TEST(RttEstimator, BacksOffAndStaysWithinBounds) {
  RttEstimator rtt(50 * kMs, 5 * kMs, 100 * kMs);
  for (int i = 0; i < 50; ++i) rtt.Sample(kMs / 20);
  EXPECT_EQ(rtt.Timeout(1), 5 * kMs);  // the minimum
  EXPECT_EQ(rtt.Timeout(2), 10 * kMs);
  EXPECT_EQ(rtt.Timeout(3), 20 * kMs);
  EXPECT_EQ(rtt.Timeout(6), 100 * kMs);  // capped
  EXPECT_EQ(rtt.Timeout(60), 100 * kMs);
}

}  // namespace
}  // namespace stormark::agent::aoe
