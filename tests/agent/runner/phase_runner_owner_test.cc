// A held phase belongs to the identity that prepared it (agent/access/phase_owner.h): the phase
// runner's Run, Abort, Cleanup and Heartbeat from anyone else, or without the token, change
// nothing; only AbortHeldPhase ends a phase whoever holds it.
#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "agent/runner/phase_runner.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using stormark::v1::PhaseResult;
using stormark::v1::PhaseSpec;
using stormark::v1::StreamSpec;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::Not;

constexpr uint64_t kMiB = 1 << 20;

PhaseSpec WriteSpec(const std::string& phase_id, uint64_t size = 2 * kMiB,
                    uint32_t bs = 64 * 1024) {
  PhaseSpec spec;
  spec.set_phase_id(phase_id);
  spec.set_target("scratch");
  spec.set_progress_interval_ms(10);
  StreamSpec* stream = spec.mutable_stream();
  stream->set_direction(StreamSpec::WRITE);
  stream->set_size_bytes(size);
  stream->set_block_size(bs);
  return spec;
}

Identity Named(const std::string& name) {
  Identity id;
  id.kind = Identity::Kind::kCertificate;
  id.name = name;
  return id;
}

bool KeepListening(const stormark::v1::RunUpdate::Progress&) { return true; }
bool StillHere() { return false; }

class PhaseOwnershipTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    HostFacts host;
    host.ram_bytes = uint64_t{64} << 30;
    runner_ = std::make_unique<PhaseRunner>(ConfigWithTarget(), host, common::SystemClock());
  }

  void TearDown() override {
    runner_.reset();
    TempDirTest::TearDown();
  }

  std::string MustPrepare(const PhaseSpec& spec) {
    common::StatusOr<stormark::v1::PrepareReply> reply = runner_->Prepare(spec, owner_);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? reply->phase_token() : "";
  }

  stormark::v1::RunRequest RunNow(const std::string& phase_id, const std::string& token,
                                  int64_t delay_nanos = 0) {
    stormark::v1::RunRequest request;
    request.set_phase_id(phase_id);
    request.set_phase_token(token);
    request.set_start_at_unix_nanos(common::SystemClock().NowUnixNanos() + delay_nanos);
    return request;
  }

  // Every call `caller` can make on the held phase `phase_id` with `token` is refused,
  // naming the caller and neither the owner nor the phase's real token `secret`.
  void ExpectAllRefused(const Identity& caller, const std::string& token,
                        const std::string& secret) {
    std::vector<common::Status> refusals = {
        runner_->Run(RunNow("p1", token), caller, KeepListening, StillHere).status(),
        runner_->Abort("p1", token, caller).status(),
        runner_->Cleanup("p1", token, caller).status(),
    };
    // Heartbeats renew nothing; one from the owner without the token (sent before Prepare's
    // reply arrived) is answered all the same.
    if (caller.name != owner_.name || !token.empty()) {
      refusals.push_back(runner_->Heartbeat("p1", token, caller).status());
    }
    for (const common::Status& refused : refusals) {
      EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << refused;
      EXPECT_THAT(refused.message(), HasSubstr(caller.name + " may not "));
      EXPECT_THAT(refused.message(), HasSubstr("phase 'p1'"));
      EXPECT_THAT(refused.message(), Not(HasSubstr(secret)));
      if (caller.name != owner_.name) {
        EXPECT_THAT(refused.message(), HasSubstr("belongs to another identity"));
        EXPECT_THAT(refused.message(), Not(HasSubstr(owner_.name)));
      }
    }
    // Nothing changed.
    EXPECT_EQ(runner_->BusyWith(), "p1");
    EXPECT_EQ(runner_->HeldBy(), owner_.name);
    EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-p1"));
  }

  const Identity owner_ = Named("CN=controller");
  const Identity intruder_ = Named("CN=intruder");
  std::unique_ptr<PhaseRunner> runner_;
};

TEST_F(PhaseOwnershipTest, PrepareReturnsA128BitTokenNewForEveryPhase) {
  const std::string first = MustPrepare(WriteSpec("p1"));
  EXPECT_THAT(first, MatchesRegex("[0-9a-f]{32}"));
  ASSERT_TRUE(runner_->Cleanup("p1", first, owner_).ok());
  const std::string second = MustPrepare(WriteSpec("p2"));
  EXPECT_THAT(second, MatchesRegex("[0-9a-f]{32}"));
  EXPECT_NE(first, second);
}

TEST_F(PhaseOwnershipTest, AnotherIdentityIsRefusedEvenWithTheToken) {
  const std::string token = MustPrepare(WriteSpec("p1"));
  ExpectAllRefused(intruder_, token, token);
  ExpectAllRefused(intruder_, "", token);
  // The owner's phase runs as if nothing happened.
  common::StatusOr<PhaseResult> result =
      runner_->Run(RunNow("p1", token), owner_, KeepListening, StillHere);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), PhaseResult::SUCCEEDED) << result->error();
  ExpectAllRefused(intruder_, token, token);  // Finished, awaiting its owner's cleanup.
  common::StatusOr<CleanupReport> removed = runner_->Cleanup("p1", token, owner_);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->removed, 2);
}

TEST_F(PhaseOwnershipTest, TheSameIdentityWithoutTheTokenIsRefused) {
  const std::string token = MustPrepare(WriteSpec("p1"));
  ExpectAllRefused(owner_, "", token);
  std::string wrong = token;
  wrong[0] = wrong[0] == '0' ? '1' : '0';
  ExpectAllRefused(owner_, wrong, token);
  const common::Status refused = runner_->Abort("p1", "", owner_).status();
  EXPECT_THAT(refused.message(), HasSubstr("does not carry the phase token"));
  EXPECT_THAT(runner_->Abort("p1", wrong, owner_).status().message(),
              HasSubstr("carries the wrong phase token"));
}

TEST_F(PhaseOwnershipTest, AbortWithoutAPhaseIdAbortsNothing) {
  const std::string token = MustPrepare(WriteSpec("p1"));
  for (const Identity& caller : {owner_, intruder_}) {
    common::StatusOr<bool> aborted = runner_->Abort("", token, caller);
    EXPECT_EQ(aborted.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(aborted.status().message(), HasSubstr("no wildcard"));
  }
  EXPECT_EQ(runner_->BusyWith(), "p1");
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-p1"));
  // Naming another phase aborts nothing either.
  common::StatusOr<bool> other = runner_->Abort("p2", token, owner_);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(*other);
  EXPECT_EQ(runner_->BusyWith(), "p1");
}

TEST_F(PhaseOwnershipTest, HeartbeatsOfAnotherIdentityDoNotExtendTheLease) {
  PhaseSpec spec = WriteSpec("p1");
  spec.set_heartbeat_timeout_ms(400);
  const std::string token = MustPrepare(spec);
  // The intruder heartbeats often, with the token even; the owner's own identity sends only
  // heartbeats with a wrong token or none (its controller is dead).
  std::string wrong = token;
  wrong[0] = wrong[0] == '0' ? '1' : '0';
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(700);
  while (std::chrono::steady_clock::now() < until) {
    EXPECT_EQ(runner_->Heartbeat("p1", token, intruder_).status().code(),
              absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(runner_->Heartbeat("p1", wrong, owner_).status().code(),
              absl::StatusCode::kPermissionDenied);
    // Answered, and renews nothing.
    EXPECT_TRUE(runner_->Heartbeat("p1", "", owner_).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(runner_->ReclaimAbandoned(), "p1");
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseOwnershipTest, HeartbeatsOfTheOwnerKeepTheLease) {
  PhaseSpec spec = WriteSpec("p1");
  spec.set_heartbeat_timeout_ms(400);
  const std::string token = MustPrepare(spec);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(700);
  while (std::chrono::steady_clock::now() < until) {
    common::StatusOr<std::string> held = runner_->Heartbeat("p1", token, owner_);
    ASSERT_TRUE(held.ok()) << held.status();
    EXPECT_EQ(*held, "p1");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(runner_->ReclaimAbandoned(), "");
  EXPECT_EQ(runner_->BusyWith(), "p1");
}

TEST_F(PhaseOwnershipTest, HeartbeatsNamingNoPhaseOrAnotherAreAnsweredByAnyone) {
  const std::string token = MustPrepare(WriteSpec("p1"));
  for (const std::string& phase : {std::string(), std::string("p0")}) {
    common::StatusOr<std::string> held = runner_->Heartbeat(phase, "", intruder_);
    ASSERT_TRUE(held.ok()) << held.status();
    EXPECT_EQ(*held, "p1");
  }
}

TEST_F(PhaseOwnershipTest, WhilePreparingTheOwnerMayAbortAndHeartbeatWithoutAToken) {
  // A read lays out 1 GiB first: long enough to be caught preparing (the abort stops it).
  PhaseSpec spec = WriteSpec("p1", uint64_t{1} << 30, 1 << 20);
  spec.mutable_stream()->set_direction(StreamSpec::READ);
  std::promise<void> preparing;
  std::atomic<bool> signalled{false};
  auto gone = [&] {
    if (!signalled.exchange(true)) preparing.set_value();
    return false;
  };
  std::future<common::StatusOr<stormark::v1::PrepareReply>> prepared =
      std::async(std::launch::async, [&] { return runner_->Prepare(spec, owner_, gone); });
  ASSERT_EQ(preparing.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(runner_->Heartbeat("p1", "", intruder_).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(runner_->Abort("p1", "", intruder_).status().code(),
            absl::StatusCode::kPermissionDenied);
  common::StatusOr<std::string> held = runner_->Heartbeat("p1", "", owner_);
  ASSERT_TRUE(held.ok()) << held.status();
  common::StatusOr<bool> aborted = runner_->Abort("p1", "", owner_);
  ASSERT_TRUE(aborted.ok()) << aborted.status();
  EXPECT_TRUE(*aborted);
  ASSERT_EQ(prepared.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(prepared.get().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseOwnershipTest, AbortHeldPhaseEndsARunningPhaseWhoeverHoldsIt) {
  const std::string token = MustPrepare(WriteSpec("p1", uint64_t{1} << 30, 4096));
  std::promise<void> running;
  std::atomic<bool> signalled{false};
  auto progress = [&](const stormark::v1::RunUpdate::Progress&) {
    if (!signalled.exchange(true)) running.set_value();
    return true;
  };
  std::future<common::StatusOr<PhaseResult>> result = std::async(std::launch::async, [&] {
    return runner_->Run(RunNow("p1", token), owner_, progress, StillHere);
  });
  ASSERT_EQ(running.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const PhaseRunner::ForcedAbort done =
      runner_->AbortHeldPhase("aborted by the local operator: stuck controller");
  EXPECT_EQ(done.phase_id, "p1");
  EXPECT_EQ(done.owner, "CN=controller");
  EXPECT_EQ(done.stuck_worker, "");
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());

  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::ABORTED);
  EXPECT_THAT(r->error(), AllOf(HasSubstr("local operator"), HasSubstr("stuck controller")));
  EXPECT_EQ(runner_->AbortHeldPhase("again").phase_id, "");
}

TEST_F(PhaseOwnershipTest, ShutdownEndsThePhaseWhoeverHoldsIt) {
  MustPrepare(WriteSpec("p1"));
  runner_->Shutdown();
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

}  // namespace
}  // namespace stormark::agent
