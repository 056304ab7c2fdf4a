// Attack: an agent that answers every call as an agent does, but reports figures no run can
// produce, beside a real agent. Its host fails with one line naming the field, and the real
// host's figures are the phase's, whole.
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "common/strings.h"
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
using ProgressLie = std::function<void(stormark::v1::RunUpdate::Progress&)>;

// Arms, starts at the instant it is sent, sends a progress half way when `progress_lie` is set
// and ends 50 ms later with a result of 1 MiB, as an agent does; `lie` then changes the result,
// `progress_lie` the progress, and `clock_lie`, when set, is what its clock reads in SyncClock.
class LyingAgent final : public FakeAgent {
 public:
  LyingAgent(Lie lie, std::function<int64_t()> clock_lie, ProgressLie progress_lie = nullptr)
      : FakeAgent("lying"),
        lie_(std::move(lie)),
        clock_lie_(std::move(clock_lie)),
        progress_lie_(std::move(progress_lie)) {}
  ~LyingAgent() override { Shutdown(); }

  grpc::Status Run(grpc::ServerContext* context, const stormark::v1::RunRequest*,
                   grpc::ServerWriter<stormark::v1::RunUpdate>* writer) override {
    stormark::v1::RunUpdate armed;
    armed.mutable_armed()->set_armed_unix_nanos(Now());
    writer->Write(armed);
    while (!started().WaitForNotificationWithTimeout(absl::Milliseconds(10))) {
      if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (progress_lie_) {
      stormark::v1::RunUpdate update;
      stormark::v1::RunUpdate::Progress* p = update.mutable_progress();
      p->set_elapsed_nanos(25'000'000);
      p->set_bytes(1 << 19);
      p->set_ops(8);
      progress_lie_(*p);
      writer->Write(update);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
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

 protected:
  int64_t ClockReading() override { return clock_lie_ ? clock_lie_() : Now(); }

 private:
  const Lie lie_;
  const std::function<int64_t()> clock_lie_;
  const ProgressLie progress_lie_;
};

class FleetImplausibleTest : public AgentsTest {
 protected:
  // A fleet of a real agent (host 0) and `liar` (host 1), connected.
  std::unique_ptr<Fleet> Connect(LyingAgent& liar) {
    std::vector<std::unique_ptr<AgentClient>> clients = RealAgentAndFake(liar);
    if (clients.size() != 2) return nullptr;
    auto fleet = std::make_unique<Fleet>(std::move(clients), common::SystemClock());
    connected_ = fleet->ConnectAll();
    return fleet;
  }

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
    const PhaseOutcome outcome =
        fleet->RunPhase(StreamWrite(4 << 20, 1 << 16), "implausible-" + c.what, nullptr);
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
    liar.Shutdown();
  }
}

// A progress update feeds the host's phase deadline and the live display: one no run can send
// (an elapsed time near 2^63 would put a size-bound phase's deadline past any wait) fails the
// host at once, and its stream is given up.
TEST_F(FleetImplausibleTest, ALyingProgressFailsTheHostWithTheFieldNamed) {
  const std::vector<std::pair<ProgressLie, std::string>> cases = {
      {[](auto& p) { p.set_elapsed_nanos(kInt64Max); }, "elapsed_nanos is 9223372036854775807"},
      {[](auto& p) { p.set_elapsed_nanos(-1); }, "elapsed_nanos is -1: negative"},
      {[](auto& p) { p.set_bytes(std::numeric_limits<uint64_t>::max()); },
       "bytes is 18446744073709551615: past 1 EiB/s"},
      {[](auto& p) { p.set_ops(std::numeric_limits<uint64_t>::max()); },
       "ops is 18446744073709551615: past 2^40 operations a second"},
  };
  for (const auto& [lie, said] : cases) {
    SCOPED_TRACE(said);
    int progressed = 0;
    LyingAgent liar([](auto&) {}, nullptr, lie);
    std::unique_ptr<Fleet> fleet = Connect(liar);
    ASSERT_NE(fleet, nullptr);
    for (const auto& s : connected_) ASSERT_TRUE(s.ok()) << s;
    const PhaseOutcome outcome = fleet->RunPhase(
        StreamWrite(4 << 20, 1 << 16), "implausible-progress", [&](size_t host, const auto&) {
          if (host == 1) ++progressed;
        });
    ASSERT_TRUE(outcome.hosts[0].succeeded()) << outcome.hosts[0].error;
    EXPECT_FALSE(outcome.hosts[1].succeeded());
    EXPECT_THAT(outcome.hosts[1].error,
                HasSubstr(common::StrCat("host ", outcome.hosts[1].host,
                                         ": the agent's progress is not plausible: ", said)));
    EXPECT_EQ(progressed, 0) << "the lie reached the display";
    const PhaseSummary summary = Summarize(outcome);
    ASSERT_TRUE(summary.all_hosts.has_value());
    EXPECT_EQ(summary.all_hosts->hosts, 1);
    fleet.reset();
    liar.Shutdown();
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
    liar.Shutdown();
  }
}

}  // namespace
}  // namespace stormark::controller
