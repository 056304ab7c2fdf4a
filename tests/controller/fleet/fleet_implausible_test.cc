// Attack: an agent that answers every call as an agent does, but reports figures no run can
// produce, beside a real agent. Its host fails with one line naming the field, and the real
// host's figures are the phase's, whole.
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/strings.h"
#include "common/version.h"
#include "controller/fleet/fleet.h"
#include "controller/report/summary.h"
#include "controller/report/validity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stormark/v1/agent.grpc.pb.h"
#include "tests/controller/test_agents.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

using Lie = std::function<void(stormark::v1::PhaseResult&)>;

// Arms, starts at the instant it is sent and ends 50 ms later with a result of 1 MiB, as an
// agent does; `lie` then changes the result, and `clock_lie`, when set, is what its clock
// reads in SyncClock.
class LyingAgent final : public stormark::v1::Agent::Service {
 public:
  LyingAgent(Lie lie, std::function<int64_t()> clock_lie)
      : lie_(std::move(lie)), clock_lie_(std::move(clock_lie)) {}

  grpc::Status GetInfo(grpc::ServerContext*, const stormark::v1::GetInfoRequest*,
                       stormark::v1::AgentInfo* info) override {
    info->set_agent_version("0.1.0-lying");
    *info->mutable_protocol() = common::OurProtocol();
    info->set_hostname("lying");
    stormark::v1::TargetInfo* target = info->add_targets();
    target->set_name("scratch");
    target->set_kind("dir");
    info->set_now_unix_nanos(Now());
    return grpc::Status::OK;
  }
  grpc::Status SyncClock(grpc::ServerContext*, const stormark::v1::SyncClockRequest* request,
                         stormark::v1::SyncClockReply* reply) override {
    reply->set_controller_send_unix_nanos(request->controller_send_unix_nanos());
    const int64_t now = clock_lie_ ? clock_lie_() : Now();
    reply->set_agent_receive_unix_nanos(now);
    reply->set_agent_send_unix_nanos(now);
    return grpc::Status::OK;
  }
  grpc::Status Prepare(grpc::ServerContext*, const stormark::v1::PrepareRequest*,
                       stormark::v1::PrepareReply* reply) override {
    reply->set_prepared_unix_nanos(Now());
    reply->set_phase_token("0123456789abcdef0123456789abcdef");
    return grpc::Status::OK;
  }
  grpc::Status Run(grpc::ServerContext* context, const stormark::v1::RunRequest*,
                   grpc::ServerWriter<stormark::v1::RunUpdate>* writer) override {
    stormark::v1::RunUpdate armed;
    armed.mutable_armed()->set_armed_unix_nanos(Now());
    writer->Write(armed);
    while (!started_.WaitForNotificationWithTimeout(absl::Milliseconds(10))) {
      if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stormark::v1::RunUpdate update;
    stormark::v1::PhaseResult* r = update.mutable_result();
    r->set_state(stormark::v1::PhaseResult::SUCCEEDED);
    r->set_bytes(1 << 20);
    r->set_ops(16);
    r->set_start_unix_nanos(Now() - 50'000'000);
    r->set_end_unix_nanos(Now());
    r->set_elapsed_nanos(50'000'000);
    for (int i = 0; i < 2; ++i) {
      stormark::v1::IntervalSample* s = r->add_series();
      s->set_offset_nanos(i * 25'000'000);
      s->set_length_nanos(25'000'000);
      s->set_bytes(1 << 19);
      s->set_ops(8);
    }
    lie_(*r);
    writer->Write(update);
    return grpc::Status::OK;
  }
  grpc::Status Start(grpc::ServerContext*, const stormark::v1::StartRequest*,
                     stormark::v1::StartReply* reply) override {
    reply->set_received_unix_nanos(Now());
    if (!started_.HasBeenNotified()) started_.Notify();
    return grpc::Status::OK;
  }
  grpc::Status Heartbeat(grpc::ServerContext*, const stormark::v1::HeartbeatRequest* request,
                         stormark::v1::HeartbeatReply* reply) override {
    reply->set_now_unix_nanos(Now());
    reply->set_phase_id(request->phase_id());
    return grpc::Status::OK;
  }
  grpc::Status Abort(grpc::ServerContext*, const stormark::v1::AbortRequest*,
                     stormark::v1::AbortReply*) override {
    return grpc::Status::OK;
  }
  grpc::Status Cleanup(grpc::ServerContext*, const stormark::v1::CleanupRequest*,
                       stormark::v1::CleanupReply*) override {
    return grpc::Status::OK;
  }

 private:
  static int64_t Now() { return common::SystemClock().NowUnixNanos(); }

  const Lie lie_;
  const std::function<int64_t()> clock_lie_;
  absl::Notification started_;
};

class FleetImplausibleTest : public AgentsTest {
 protected:
  // A fleet of a real agent (host 0) and `liar` (host 1), connected.
  std::unique_ptr<Fleet> Connect(LyingAgent& liar) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&liar);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr) return nullptr;
    agent::AgentServer* good = StartAgent();
    if (good == nullptr) return nullptr;
    std::vector<std::unique_ptr<AgentClient>> clients;
    clients.push_back(ClientFor(*good));
    const std::string address = common::StrCat("127.0.0.1:", port);
    clients.push_back(std::make_unique<AgentClient>(address, AgentClient::MakeChannel(address),
                                                    common::SystemClock()));
    auto fleet = std::make_unique<Fleet>(std::move(clients), common::SystemClock());
    connected_ = fleet->ConnectAll();
    return fleet;
  }

  void TearDown() override {
    if (server_) server_->Shutdown();
    AgentsTest::TearDown();
  }

  static PhasePlan Write() {
    PhasePlan plan;
    plan.name = "w";
    plan.spec.mutable_stream()->set_direction(stormark::v1::StreamSpec::WRITE);
    plan.spec.mutable_stream()->set_size_bytes(4 << 20);
    plan.spec.mutable_stream()->set_block_size(1 << 16);
    return plan;
  }

  std::unique_ptr<grpc::Server> server_;
  std::vector<common::Status> connected_;
};

struct Case {
  std::string what;
  Lie lie;
  std::string said;
};

TEST_F(FleetImplausibleTest, ALyingHostFailsWithTheFieldNamedAndTheOthersFiguresStand) {
  const std::vector<Case> cases = {
      {"elapsed", [](auto& r) { r.set_elapsed_nanos(kInt64Max); },
       "elapsed_nanos is 9223372036854775807"},
      {"start", [](auto& r) { r.set_start_unix_nanos(kInt64Min); },
       "start_unix_nanos is -9223372036854775808: not an instant between 1970 and 2116"},
      {"series", [](auto& r) { r.mutable_series(1)->set_offset_nanos(kInt64Max - 5); },
       "series[1].offset_nanos is 9223372036854775802"},
      {"bytes", [](auto& r) { r.set_bytes(std::numeric_limits<uint64_t>::max()); },
       "bytes is 18446744073709551615: past 1 EiB/s"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    LyingAgent liar(c.lie, nullptr);
    std::unique_ptr<Fleet> fleet = Connect(liar);
    ASSERT_NE(fleet, nullptr);
    for (const auto& s : connected_) ASSERT_TRUE(s.ok()) << s;
    const PhaseOutcome outcome = fleet->RunPhase(Write(), "implausible-" + c.what, nullptr);
    ASSERT_TRUE(outcome.hosts[0].succeeded()) << outcome.hosts[0].error;
    EXPECT_FALSE(outcome.hosts[1].succeeded());
    EXPECT_THAT(outcome.hosts[1].error,
                HasSubstr(common::StrCat("host ", outcome.hosts[1].host,
                                         ": the agent's result is not plausible: ", c.said)));
    // The phase's figures are the real host's.
    const PhaseSummary summary = Summarize(outcome);
    ASSERT_TRUE(summary.all_hosts.has_value());
    EXPECT_EQ(summary.all_hosts->bytes, uint64_t{4} << 20);
    EXPECT_EQ(summary.all_hosts->hosts, 1);
    EXPECT_EQ(summary.failed, 1);
    EXPECT_NE(JudgeValidity(outcome).verdict, PhaseValidity::Verdict::kInvalid);
    fleet.reset();
    server_->Shutdown();
    server_.reset();
  }
}

TEST_F(FleetImplausibleTest, AClockReadingOutsideTheCenturiesFailsTheHostAtConnect) {
  for (const int64_t reading : {kInt64Min, int64_t{-1}, kInt64Max}) {
    SCOPED_TRACE(reading);
    LyingAgent liar([](auto&) {}, [reading] { return reading; });
    std::unique_ptr<Fleet> fleet = Connect(liar);
    ASSERT_NE(fleet, nullptr);
    ASSERT_EQ(connected_.size(), 2u);
    EXPECT_TRUE(connected_[0].ok()) << connected_[0];
    EXPECT_THAT(connected_[1].message(),
                HasSubstr(common::StrCat("the agent's clock reading is not plausible: "
                                         "agent_receive_unix_nanos is ",
                                         reading, ": not an instant between 1970 and 2116")));
    fleet.reset();
    server_->Shutdown();
    server_.reset();
  }
}

}  // namespace
}  // namespace stormark::controller
