// A fleet against an agent that takes a Run and never says it is armed: the host is given up
// at its arm deadline, and the other host's phase goes on.
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "common/clock.h"
#include "common/strings.h"
#include "common/version.h"
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
class NeverArms final : public stormark::v1::Agent::Service {
 public:
  grpc::Status GetInfo(grpc::ServerContext*, const stormark::v1::GetInfoRequest*,
                       stormark::v1::AgentInfo* info) override {
    info->set_agent_version("0.1.0-never-arms");
    *info->mutable_protocol() = common::OurProtocol();
    info->set_hostname("never-arms");
    stormark::v1::TargetInfo* target = info->add_targets();
    target->set_name("scratch");
    target->set_kind("dir");
    info->set_now_unix_nanos(common::SystemClock().NowUnixNanos());
    return grpc::Status::OK;
  }
  grpc::Status SyncClock(grpc::ServerContext*, const stormark::v1::SyncClockRequest* request,
                         stormark::v1::SyncClockReply* reply) override {
    reply->set_controller_send_unix_nanos(request->controller_send_unix_nanos());
    const int64_t now = common::SystemClock().NowUnixNanos();
    reply->set_agent_receive_unix_nanos(now);
    reply->set_agent_send_unix_nanos(now);
    return grpc::Status::OK;
  }
  grpc::Status Prepare(grpc::ServerContext*, const stormark::v1::PrepareRequest*,
                       stormark::v1::PrepareReply* reply) override {
    reply->set_prepared_unix_nanos(common::SystemClock().NowUnixNanos());
    reply->set_phase_token("0123456789abcdef0123456789abcdef");
    return grpc::Status::OK;
  }
  grpc::Status Run(grpc::ServerContext* context, const stormark::v1::RunRequest*,
                   grpc::ServerWriter<stormark::v1::RunUpdate>*) override {
    while (!context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const stormark::v1::HeartbeatRequest* request,
                         stormark::v1::HeartbeatReply* reply) override {
    reply->set_now_unix_nanos(common::SystemClock().NowUnixNanos());
    reply->set_phase_id(request->phase_id());
    return grpc::Status::OK;
  }
  grpc::Status Abort(grpc::ServerContext*, const stormark::v1::AbortRequest*,
                     stormark::v1::AbortReply*) override {
    return grpc::Status::OK;  // And goes on not arming.
  }
  grpc::Status Cleanup(grpc::ServerContext*, const stormark::v1::CleanupRequest*,
                       stormark::v1::CleanupReply*) override {
    return grpc::Status::OK;
  }
};

class FleetArmTest : public AgentsTest {};

TEST_F(FleetArmTest, AnAgentThatNeverArmsIsGivenUpAtItsDeadlineAndTheOthersRun) {
  NeverArms service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  agent::AgentServer* good = StartAgent();
  ASSERT_NE(good, nullptr);

  std::vector<std::unique_ptr<AgentClient>> clients;
  clients.push_back(ClientFor(*good));
  const std::string address = common::StrCat("127.0.0.1:", port);
  clients.push_back(std::make_unique<AgentClient>(address, AgentClient::MakeChannel(address),
                                                  common::SystemClock()));
  FleetOptions options;
  options.arm_deadline_nanos = 1'000'000'000;
  Fleet fleet(std::move(clients), common::SystemClock(), options);
  for (const auto& s : fleet.ConnectAll()) ASSERT_TRUE(s.ok()) << s;

  PhasePlan plan;
  plan.name = "w";
  plan.spec.mutable_stream()->set_direction(stormark::v1::StreamSpec::WRITE);
  plan.spec.mutable_stream()->set_size_bytes(1 << 20);
  plan.spec.mutable_stream()->set_block_size(1 << 16);
  const auto begin = std::chrono::steady_clock::now();
  const PhaseOutcome outcome = fleet.RunPhase(plan, "never-armed-1", nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(10));
  ASSERT_TRUE(outcome.hosts[0].succeeded()) << outcome.hosts[0].error;
  EXPECT_EQ(outcome.hosts[0].result->bytes(), uint64_t{1} << 20);
  EXPECT_FALSE(outcome.hosts[1].succeeded());
  EXPECT_THAT(outcome.hosts[1].error, HasSubstr("did not arm phase 'never-armed-1' within 1 s"));
  EXPECT_THAT(fleet.host_error(1), HasSubstr("did not arm"));
  server->Shutdown();
}

}  // namespace
}  // namespace stormark::controller
