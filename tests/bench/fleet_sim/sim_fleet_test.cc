#include "bench/fleet_sim/sim_fleet.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "common/version.h"
#include "gtest/gtest.h"

namespace stormark::fleet_sim {
namespace {

TEST(SimFleet, ForAuthorityFindsTheAgentOfThePort) {
  SimFleet fleet({0, 0, 0});
  fleet.Bind({40001, 40002, 40003});
  EXPECT_EQ(fleet.ForAuthority("127.0.0.1:40002"), &fleet.agent(1));
  EXPECT_EQ(fleet.ForAuthority("127.0.0.1:40003"), &fleet.agent(2));
  EXPECT_EQ(fleet.ForAuthority("127.0.0.1:40004"), nullptr);
  EXPECT_EQ(fleet.ForAuthority("127.0.0.1"), nullptr);
  EXPECT_EQ(fleet.ForAuthority("127.0.0.1:4000x"), nullptr);
  EXPECT_EQ(fleet.ForAuthority("127.0.0.1:99999"), nullptr);
  EXPECT_EQ(fleet.ForAuthority(""), nullptr);
}

TEST(SimFleet, SpreadOffsetsStayWithinHalfTheSpread) {
  EXPECT_EQ(SimFleet::SpreadOffsets(3, 0), std::vector<int64_t>(3, 0));
  const std::vector<int64_t> offsets = SimFleet::SpreadOffsets(1000, 10'000'000);
  int64_t lo = 0, hi = 0;
  for (int64_t o : offsets) {
    EXPECT_LE(std::abs(o), 5'000'000);
    lo = std::min(lo, o);
    hi = std::max(hi, o);
  }
  EXPECT_GT(hi - lo, 9'000'000);  // Spread over the range, not bunched.
}

TEST(SimAgent, InfoHasWhatTheControllerReads) {
  SimAgent agent(42, 0);
  const stormark::v1::AgentInfo info = agent.Info();
  EXPECT_EQ(info.hostname(), "sim-00042");
  EXPECT_EQ(info.protocol().major(), common::OurProtocol().major());
  EXPECT_EQ(info.protocol().minor(), common::OurProtocol().minor());
  ASSERT_EQ(info.targets_size(), 1);
  EXPECT_EQ(info.targets(0).name(), kTargetName);
  EXPECT_EQ(info.targets(0).kind(), "null");
  ASSERT_EQ(info.workloads_size(), 1);
  EXPECT_EQ(info.workloads(0), "randio");
  EXPECT_GT(info.cpu_count(), 0u);
  EXPECT_GT(info.ram_bytes(), 0u);
  EXPECT_TRUE(info.environment().contains("kernel"));
}

TEST(SimAgent, ReleaseLetsGoOfTheNamedPhaseOnly) {
  SimAgent agent(0, 0);
  auto phase = std::make_shared<PhaseShape>();
  phase->phase_id = "p1";
  agent.Hold(phase);
  EXPECT_FALSE(agent.Release("p2"));
  EXPECT_EQ(agent.Held(), phase);
  EXPECT_TRUE(agent.Release("p1"));
  EXPECT_EQ(agent.Held(), nullptr);
}

}  // namespace
}  // namespace stormark::fleet_sim
