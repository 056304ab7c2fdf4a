// A fleet against an agent that takes a Run and never says it is armed: the host is given up
// at its arm deadline, and the other host's phase goes on.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "controller/fleet/fleet.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stormark/v1/agent.grpc.pb.h"
#include "tests/controller/test_agents.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

// Answers like an agent of this protocol, but its Run waits until it is cancelled and sends
// nothing.
class NeverArms final : public FakeAgent {
 public:
  NeverArms() : FakeAgent("never-arms") {}
  ~NeverArms() override { Shutdown(); }

  grpc::Status Run(grpc::ServerContext* context, const stormark::v1::RunRequest*,
                   grpc::ServerWriter<stormark::v1::RunUpdate>*) override {
    while (!context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
  }
};

class FleetArmTest : public AgentsTest {};

TEST_F(FleetArmTest, AnAgentThatNeverArmsIsGivenUpAtItsDeadlineAndTheOthersRun) {
  NeverArms service;
  std::vector<std::unique_ptr<AgentClient>> clients = RealAgentAndFake(service);
  ASSERT_EQ(clients.size(), 2u);
  FleetOptions options;
  options.arm_deadline_nanos = 1'000'000'000;
  Fleet fleet(std::move(clients), common::SystemClock(), options);
  for (const auto& s : fleet.ConnectAll()) ASSERT_TRUE(s.ok()) << s;

  const PhasePlan plan = StreamWrite(1 << 20, 1 << 16);
  const auto begin = std::chrono::steady_clock::now();
  const PhaseOutcome outcome = fleet.RunPhase(plan, "never-armed-1", nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(10));
  ASSERT_TRUE(outcome.hosts[0].succeeded()) << outcome.hosts[0].error;
  EXPECT_EQ(outcome.hosts[0].result->bytes(), uint64_t{1} << 20);
  EXPECT_FALSE(outcome.hosts[1].succeeded());
  EXPECT_THAT(outcome.hosts[1].error, HasSubstr("did not arm phase 'never-armed-1' within 1 s"));
  EXPECT_THAT(fleet.host_error(1), HasSubstr("did not arm"));
  service.Shutdown();
}

}  // namespace
}  // namespace stormark::controller
