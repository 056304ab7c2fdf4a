#include "agent/runner/phase_runner.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using stormark::v1::PhaseResult;
using stormark::v1::PhaseSpec;
using stormark::v1::StreamSpec;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

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

bool KeepListening(const stormark::v1::RunUpdate::Progress&) { return true; }
bool StillHere() { return false; }

class PhaseRunnerTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    HostFacts host;
    host.hostname = "testhost";
    host.ram_bytes = uint64_t{64} << 30;
    runner_ = std::make_unique<PhaseRunner>(ConfigWithTarget(), host, common::SystemClock());
  }

  void TearDown() override {
    runner_.reset();
    TempDirTest::TearDown();
  }

  void MustPrepare(const PhaseSpec& spec) {
    common::StatusOr<stormark::v1::PrepareReply> reply = runner_->Prepare(spec, caller_);
    ASSERT_TRUE(reply.ok()) << reply.status();
    token_ = reply->phase_token();
  }

  // A Run request of this test's controller, carrying the token of its last Prepare.
  stormark::v1::RunRequest RunNow(const std::string& phase_id, int64_t delay_nanos = 0) {
    stormark::v1::RunRequest request;
    request.set_phase_id(phase_id);
    request.set_phase_token(token_);
    request.set_start_at_unix_nanos(common::SystemClock().NowUnixNanos() + delay_nanos);
    return request;
  }

  // Abort and Cleanup by this test's controller.
  bool Abort(const std::string& phase_id) {
    common::StatusOr<bool> aborted = runner_->Abort(phase_id, token_, caller_);
    EXPECT_TRUE(aborted.ok()) << aborted.status();
    return aborted.ok() && *aborted;
  }
  common::StatusOr<CleanupReport> Cleanup(const std::string& phase_id) {
    return runner_->Cleanup(phase_id, token_, caller_);
  }

  const Identity caller_ = [] {
    Identity id;
    id.name = "CN=controller";
    return id;
  }();
  std::string token_;
  std::unique_ptr<PhaseRunner> runner_;
};

TEST_F(PhaseRunnerTest, IdleRunnerIsNotBusy) {
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_EQ(runner_->config().TargetNames(), "scratch");
  EXPECT_EQ(runner_->host().hostname, "testhost");
}

TEST_F(PhaseRunnerTest, PrepareHoldsTheSlot) {
  const int64_t before = common::SystemClock().NowUnixNanos();
  common::StatusOr<stormark::v1::PrepareReply> reply = runner_->Prepare(WriteSpec("p1"), caller_);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_GE(reply->prepared_unix_nanos(), before);
  EXPECT_THAT(reply->warnings(), Contains(HasSubstr("possibly cache-dominated")));
  EXPECT_EQ(runner_->BusyWith(), "p1");
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-p1"));
}

TEST_F(PhaseRunnerTest, SecondPrepareFailsNamingTheBusyPhase) {
  MustPrepare(WriteSpec("first"));
  common::StatusOr<stormark::v1::PrepareReply> second =
      runner_->Prepare(WriteSpec("second"), caller_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("busy with phase 'first'"));
  EXPECT_THAT(second.status().message(), HasSubstr("prepared"));
  EXPECT_EQ(runner_->BusyWith(), "first");
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-first"));
}

TEST_F(PhaseRunnerTest, SecondPrepareOfTheSamePhaseAlsoFails) {
  MustPrepare(WriteSpec("p1"));
  common::StatusOr<stormark::v1::PrepareReply> again = runner_->Prepare(WriteSpec("p1"), caller_);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  // The held phase is untouched.
  EXPECT_EQ(runner_->BusyWith(), "p1");
  EXPECT_THAT(ListDir(dir() + "/.stormark-p1"), ElementsAre("stream.dat"));
}

TEST_F(PhaseRunnerTest, AbandonedPhaseIsReclaimedByTheNextPrepare) {
  HostFacts host;
  host.ram_bytes = uint64_t{64} << 30;
  // Every held phase counts as abandoned at once.
  runner_ = std::make_unique<PhaseRunner>(ConfigWithTarget(), host, common::SystemClock(), 0);
  MustPrepare(WriteSpec("abandoned"));
  common::StatusOr<stormark::v1::PrepareReply> next = runner_->Prepare(WriteSpec("next"), caller_);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_THAT(next->warnings(), Contains(HasSubstr("removed abandoned phase 'abandoned'")));
  EXPECT_EQ(runner_->BusyWith(), "next");
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-next"));
}

TEST_F(PhaseRunnerTest, ReaperFreesAnAbandonedPhaseAndItsFiles) {
  HostFacts host;
  runner_ = std::make_unique<PhaseRunner>(ConfigWithTarget(), host, common::SystemClock(), 0);
  MustPrepare(WriteSpec("abandoned"));
  EXPECT_EQ(runner_->ReclaimAbandoned(), "abandoned");
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_EQ(runner_->ReclaimAbandoned(), "");
}

TEST_F(PhaseRunnerTest, ReaperLeavesARecentPhaseAlone) {
  MustPrepare(WriteSpec("recent"));
  EXPECT_EQ(runner_->ReclaimAbandoned(), "");
  EXPECT_EQ(runner_->BusyWith(), "recent");
}

TEST_F(PhaseRunnerTest, PrepareWhoseCallerIsGoneIsCancelledAndLeavesNothing) {
  PhaseSpec spec = WriteSpec("gone", 256 * kMiB);
  spec.mutable_stream()->set_direction(stormark::v1::StreamSpec::READ);
  spec.mutable_stream()->set_fdatasync(false);
  common::StatusOr<stormark::v1::PrepareReply> reply =
      runner_->Prepare(spec, caller_, [] { return true; });
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kCancelled) << reply.status();
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseRunnerTest, RecentlyPreparedPhaseIsNotReclaimed) {
  // The default reclaim time is minutes; a phase prepared just now is held.
  MustPrepare(WriteSpec("held"));
  EXPECT_FALSE(runner_->Prepare(WriteSpec("other"), caller_).ok());
  EXPECT_EQ(runner_->BusyWith(), "held");
}

TEST_F(PhaseRunnerTest, ConcurrentPreparesLetExactlyOneThrough) {
  constexpr int kThreads = 8;
  std::atomic<int> ok{0};
  std::atomic<int> busy{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto reply = runner_->Prepare(WriteSpec("p" + std::to_string(i)), caller_);
      if (reply.ok()) ++ok;
      if (absl::IsFailedPrecondition(reply.status())) ++busy;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(busy, kThreads - 1);
  EXPECT_EQ(ListDir(dir()).size(), 1u);
}

TEST_F(PhaseRunnerTest, UnknownTargetIsNotFoundNamingConfiguredTargets) {
  PhaseSpec spec = WriteSpec("p1");
  spec.set_target("fast");
  common::StatusOr<stormark::v1::PrepareReply> reply = runner_->Prepare(spec, caller_);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(reply.status().message(), HasSubstr("'fast'"));
  EXPECT_THAT(reply.status().message(), HasSubstr("configured: scratch"));
  EXPECT_EQ(runner_->BusyWith(), "");
}

TEST_F(PhaseRunnerTest, BadSpecIsInvalidArgumentAndLeavesNothing) {
  PhaseSpec spec = WriteSpec("p1", 1000, 3);
  common::StatusOr<stormark::v1::PrepareReply> reply = runner_->Prepare(spec, caller_);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());

  PhaseSpec no_workload = WriteSpec("p1");
  no_workload.clear_stream();
  EXPECT_EQ(runner_->Prepare(no_workload, caller_).status().code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(runner_->Prepare(WriteSpec("../p1"), caller_).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  // The slot is free again.
  MustPrepare(WriteSpec("p1"));
}

TEST_F(PhaseRunnerTest, FailedPrepareRemovesWhatItCreated) {
  // Too large for any disk: fails after the phase directory was made.
  PhaseSpec spec = WriteSpec("p1", uint64_t{1} << 60, 1 << 20);
  common::StatusOr<stormark::v1::PrepareReply> reply = runner_->Prepare(spec, caller_);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseRunnerTest, RunReportsExactBytesAndOps) {
  const uint64_t size = 4 * kMiB;
  MustPrepare(WriteSpec("p1", size, 64 * 1024));
  common::StatusOr<PhaseResult> result =
      runner_->Run(RunNow("p1"), caller_, KeepListening, StillHere);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), PhaseResult::SUCCEEDED) << result->error();
  EXPECT_EQ(result->bytes(), size);
  EXPECT_EQ(result->ops(), size / (64 * 1024));
  EXPECT_EQ(result->latency().count(), result->ops());
  EXPECT_GT(result->elapsed_nanos(), 0);
  EXPECT_GE(result->start_late_nanos(), 0);
  EXPECT_GE(result->end_unix_nanos(), result->start_unix_nanos());
  EXPECT_THAT(result->warnings(), Contains(HasSubstr("possibly cache-dominated")));
  EXPECT_THAT(result->warnings(), Contains(HasSubstr("too fast to time")));
  uint64_t series_bytes = 0;
  for (const auto& s : result->series()) series_bytes += s.bytes();
  EXPECT_EQ(series_bytes, size);
  EXPECT_EQ(runner_->BusyWith(), "p1");  // Finished, awaiting cleanup.
}

TEST_F(PhaseRunnerTest, RunWaitsForTheStartInstant) {
  MustPrepare(WriteSpec("p1"));
  const int64_t start_at = common::SystemClock().NowUnixNanos() + 100'000'000;
  stormark::v1::RunRequest request;
  request.set_phase_id("p1");
  request.set_phase_token(token_);
  request.set_start_at_unix_nanos(start_at);
  common::StatusOr<PhaseResult> result = runner_->Run(request, caller_, KeepListening, StillHere);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), PhaseResult::SUCCEEDED);
  EXPECT_GE(result->start_unix_nanos(), start_at);
  EXPECT_EQ(result->start_late_nanos(), result->start_unix_nanos() - start_at);
}

TEST_F(PhaseRunnerTest, RunFarInTheFutureIsRefused) {
  MustPrepare(WriteSpec("p1"));
  common::StatusOr<PhaseResult> result =
      runner_->Run(RunNow("p1", 3600'000'000'000), caller_, KeepListening, StillHere);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("ahead of this agent's clock"));
  // Still prepared: the controller may retry with a sane start.
  result = runner_->Run(RunNow("p1"), caller_, KeepListening, StillHere);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), PhaseResult::SUCCEEDED);
}

// An armed Run (await_start) from another thread; `armed` is set once it waits for its Start.
std::future<common::StatusOr<PhaseResult>> ArmAsync(PhaseRunner& runner, const Identity& caller,
                                                    const std::string& phase_id,
                                                    const std::string& token,
                                                    std::promise<void>& armed,
                                                    std::function<bool()> gone = StillHere) {
  stormark::v1::RunRequest request;
  request.set_phase_id(phase_id);
  request.set_phase_token(token);
  request.set_await_start(true);
  return std::async(std::launch::async, [&runner, &caller, &armed, request, gone] {
    return runner.Run(request, caller, KeepListening, gone, [&armed] {
      armed.set_value();
      return true;
    });
  });
}

TEST_F(PhaseRunnerTest, ArmedRunStartsAtTheInstantItsStartGives) {
  MustPrepare(WriteSpec("p1"));
  std::promise<void> armed;
  auto result = ArmAsync(*runner_, caller_, "p1", token_, armed);
  ASSERT_EQ(armed.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  // Armed, it waits: nothing runs until the Start comes.
  EXPECT_EQ(result.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  const int64_t start_at = common::SystemClock().NowUnixNanos() + 100'000'000;
  ASSERT_TRUE(runner_->Start("p1", token_, caller_, start_at).ok());
  // One Start per phase.
  common::Status again = runner_->Start("p1", token_, caller_, start_at);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.message(), HasSubstr("started already"));
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::SUCCEEDED) << r->error();
  EXPECT_EQ(r->bytes(), 2 * kMiB);
  EXPECT_GE(r->start_unix_nanos(), start_at);
  EXPECT_EQ(r->start_late_nanos(), r->start_unix_nanos() - start_at);
}

TEST_F(PhaseRunnerTest, StartIsRefusedUnlessItsOwnersPhaseIsArmed) {
  common::Status s = runner_->Start("p1", token_, caller_, common::SystemClock().NowUnixNanos());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("'p1' is not prepared"));
  MustPrepare(WriteSpec("p1"));
  s = runner_->Start("p1", token_, caller_, common::SystemClock().NowUnixNanos());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("not armed for a start: it is prepared"));

  std::promise<void> armed;
  auto result = ArmAsync(*runner_, caller_, "p1", token_, armed);
  ASSERT_EQ(armed.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  const int64_t soon = common::SystemClock().NowUnixNanos() + 50'000'000;
  // Another identity, or the owner without the token, cannot start it.
  Identity other;
  other.name = "CN=someone-else";
  EXPECT_EQ(runner_->Start("p1", token_, other, soon).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(runner_->Start("p1", "0123456789abcdef0123456789abcdef", caller_, soon).code(),
            absl::StatusCode::kPermissionDenied);
  // Nor another phase id, a missing instant, or one far ahead; the phase stays armed.
  EXPECT_EQ(runner_->Start("p2", token_, caller_, soon).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(runner_->Start("p1", token_, caller_, 0).code(), absl::StatusCode::kInvalidArgument);
  s = runner_->Start("p1", token_, caller_, soon + 3600'000'000'000);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("ahead of this agent's clock"));
  EXPECT_EQ(result.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);

  ASSERT_TRUE(runner_->Start("p1", token_, caller_, soon).ok());
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::SUCCEEDED) << r->error();
}

TEST_F(PhaseRunnerTest, AbortOfAnArmedRunEndsItAtOnce) {
  MustPrepare(WriteSpec("p1"));
  std::promise<void> armed;
  auto result = ArmAsync(*runner_, caller_, "p1", token_, armed);
  ASSERT_EQ(armed.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  const auto before = std::chrono::steady_clock::now();
  EXPECT_TRUE(Abort("p1"));
  ASSERT_EQ(result.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(1));
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::ABORTED);
  EXPECT_THAT(r->error(), HasSubstr("before it started"));
  EXPECT_EQ(r->bytes(), 0u);
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  // A Start that comes after the abort finds nothing to start.
  EXPECT_EQ(runner_->Start("p1", token_, caller_, common::SystemClock().NowUnixNanos()).code(),
            absl::StatusCode::kFailedPrecondition);
}

// A time-based randread of the scratch target: a workload that StartsItself.
PhaseSpec RandioReadSpec(const std::string& phase_id, uint32_t numjobs,
                         int64_t runtime_nanos = 200'000'000) {
  PhaseSpec spec;
  spec.set_phase_id(phase_id);
  spec.set_target("scratch");
  spec.set_progress_interval_ms(10);
  stormark::v1::RandioSpec* randio = spec.mutable_randio();
  randio->set_rw(stormark::v1::RandioSpec::RANDREAD);
  randio->set_bs_min(4096);
  randio->set_size_bytes(kMiB);
  randio->set_runtime_nanos(runtime_nanos);
  randio->set_time_based(true);
  randio->set_numjobs(numjobs);
  return spec;
}

// The threads of this process.
size_t ThreadCount() {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}

// This process's threads once those of earlier calls have gone: a set-up worker may still be
// ending after Prepare answered, and counted here it would be missing later.
size_t SettledThreadCount() {
  size_t n = ThreadCount();
  for (int i = 0; i < 100; ++i) {  // Until it stays the same for 50 ms, 2 s at most.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const size_t now = ThreadCount();
    if (now == n) break;
    n = now;
  }
  return n;
}

// Waits up to 5 s for this process to have at least `n` threads.
bool ThreadsReach(size_t n) {
  for (int i = 0; i < 500 && ThreadCount() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ThreadCount() >= n;
}

TEST_F(PhaseRunnerTest, AnArmedRandioRunHasItsThreadsReadyBeforeTheInstant) {
  MustPrepare(RandioReadSpec("p1", 3));
  const size_t before = SettledThreadCount();
  std::promise<void> armed;
  auto result = ArmAsync(*runner_, caller_, "p1", token_, armed);
  // A failed assertion leaves the run armed, and the future's end would wait for it for ever.
  absl::Cleanup unarm = [this] { (void)runner_->Abort("p1", token_, caller_); };
  ASSERT_EQ(armed.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  // The run's thread and its 3 jobs' (plus the test's own async caller) exist while armed,
  // and none of them has done I/O: the instant is not known yet.
  ASSERT_TRUE(ThreadsReach(before + 1 + 1 + 3))
      << ThreadCount() << " threads, " << before << " before arming";
  EXPECT_EQ(result.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  const int64_t start_at = common::SystemClock().NowUnixNanos() + 100'000'000;
  ASSERT_TRUE(runner_->Start("p1", token_, caller_, start_at).ok());
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::SUCCEEDED) << r->error();
  EXPECT_GT(r->ops(), 0u);
  EXPECT_GE(r->start_unix_nanos(), start_at);
  EXPECT_EQ(r->start_late_nanos(), r->start_unix_nanos() - start_at);
  // The run is measured from the instant: 0.2 s of it, not the time spent armed.
  EXPECT_LT(r->elapsed_nanos(), 1'000'000'000);
  EXPECT_GE(r->elapsed_nanos(), 200'000'000);
}

TEST_F(PhaseRunnerTest, ARandioRunIsArmedOnlyOnceAllItsThreadsExist) {
  // The controller sends the Start once armed: a Start that came while the jobs' threads were
  // still being made would race them for the host's last threads and memory, and a host that
  // cannot give them must fail the run with the job that found none, not lose the Start.
  constexpr uint32_t kJobs = 64;
  MustPrepare(RandioReadSpec("p1", kJobs));
  const size_t before = SettledThreadCount();
  std::atomic<size_t> threads_when_armed{0};
  std::promise<void> armed;
  stormark::v1::RunRequest request;
  request.set_phase_id("p1");
  request.set_phase_token(token_);
  request.set_await_start(true);
  auto result = std::async(std::launch::async, [&] {
    return runner_->Run(request, caller_, KeepListening, StillHere, [&] {
      threads_when_armed = ThreadCount();
      armed.set_value();
      return true;
    });
  });
  absl::Cleanup unarm = [this] { (void)runner_->Abort("p1", token_, caller_); };
  ASSERT_EQ(armed.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  // The test's async caller, the run's thread and every job's.
  EXPECT_GE(threads_when_armed.load(), before + 1 + 1 + kJobs) << before << " before arming";
  ASSERT_TRUE(runner_->Start("p1", token_, caller_, common::SystemClock().NowUnixNanos()).ok());
  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::SUCCEEDED) << r->error();
}

TEST_F(PhaseRunnerTest, AbortOfAnArmedRandioRunEndsItsReadyThreadsWithoutIo) {
  MustPrepare(RandioReadSpec("p1", 2));
  const size_t before = SettledThreadCount();
  std::promise<void> armed;
  auto result = ArmAsync(*runner_, caller_, "p1", token_, armed);
  // A failed assertion leaves the run armed, and the future's end would wait for it for ever.
  absl::Cleanup unarm = [this] { (void)runner_->Abort("p1", token_, caller_); };
  ASSERT_EQ(armed.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  ASSERT_TRUE(ThreadsReach(before + 1 + 1 + 2))
      << ThreadCount() << " threads, " << before << " before arming";
  EXPECT_TRUE(Abort("p1"));
  ASSERT_EQ(result.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::ABORTED);
  EXPECT_THAT(r->error(), HasSubstr("before it started"));
  EXPECT_EQ(r->ops(), 0u);
  EXPECT_EQ(r->bytes(), 0u);
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseRunnerTest, AStartAlreadyPastBeginsTheRunAtOnceAndSaysHowLate) {
  MustPrepare(RandioReadSpec("p1", 1));
  common::StatusOr<PhaseResult> r =
      runner_->Run(RunNow("p1", -50'000'000), caller_, KeepListening, StillHere);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::SUCCEEDED) << r->error();
  EXPECT_GE(r->start_late_nanos(), 50'000'000);
}

TEST_F(PhaseRunnerTest, ArmedRunWhoseCallerGoesFreesTheSlot) {
  MustPrepare(WriteSpec("p1"));
  std::promise<void> armed;
  std::atomic<bool> gone{false};
  auto result = ArmAsync(*runner_, caller_, "p1", token_, armed, [&gone] { return gone.load(); });
  ASSERT_EQ(armed.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  gone = true;
  ASSERT_EQ(result.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::ABORTED);
  EXPECT_THAT(r->error(), HasSubstr("went away"));
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseRunnerTest, RunOfAnUnpreparedPhaseFails) {
  common::StatusOr<PhaseResult> result =
      runner_->Run(RunNow("p1"), caller_, KeepListening, StillHere);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("'p1' is not prepared"));

  MustPrepare(WriteSpec("p1"));
  result = runner_->Run(RunNow("other"), caller_, KeepListening, StillHere);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("it holds 'p1'"));
}

TEST_F(PhaseRunnerTest, PhaseRunsAtMostOnce) {
  MustPrepare(WriteSpec("p1"));
  ASSERT_TRUE(runner_->Run(RunNow("p1"), caller_, KeepListening, StillHere).ok());
  common::StatusOr<PhaseResult> again =
      runner_->Run(RunNow("p1"), caller_, KeepListening, StillHere);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(), HasSubstr("finished"));
}

TEST_F(PhaseRunnerTest, ProgressIsReported) {
  // Big enough to outlast a few 10 ms progress intervals, aborted at the third report.
  MustPrepare(WriteSpec("p1", uint64_t{1} << 30, 4096));
  std::vector<stormark::v1::RunUpdate::Progress> reports;
  auto progress = [&](const stormark::v1::RunUpdate::Progress& p) {
    reports.push_back(p);
    return reports.size() < 3;
  };
  common::StatusOr<PhaseResult> result = runner_->Run(RunNow("p1"), caller_, progress, StillHere);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(reports.size(), 3u);
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_GT(reports[i].elapsed_nanos(), reports[i - 1].elapsed_nanos());
    EXPECT_GE(reports[i].bytes(), reports[i - 1].bytes());
  }
  EXPECT_GT(reports.back().bytes(), 0u);
  // A listener that stops listening aborts the phase and frees the slot.
  EXPECT_EQ(result->state(), PhaseResult::ABORTED);
  EXPECT_LT(result->bytes(), uint64_t{1} << 30);
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseRunnerTest, AbortDuringARunStopsItAndRemovesItsFiles) {
  MustPrepare(WriteSpec("p1", uint64_t{1} << 30, 4096));
  std::promise<void> running;
  std::atomic<bool> signalled{false};
  auto progress = [&](const stormark::v1::RunUpdate::Progress&) {
    if (!signalled.exchange(true)) running.set_value();
    return true;
  };
  std::future<common::StatusOr<PhaseResult>> result = std::async(
      std::launch::async, [&] { return runner_->Run(RunNow("p1"), caller_, progress, StillHere); });
  ASSERT_EQ(running.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(runner_->BusyWith(), "p1");
  EXPECT_FALSE(Abort("someone-else"));
  EXPECT_TRUE(Abort("p1"));
  // Abort returns only once the workload has stopped and its files are gone.
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());

  ASSERT_EQ(result.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::ABORTED);
  EXPECT_THAT(r->error(), HasSubstr("aborted"));
  EXPECT_LT(r->bytes(), uint64_t{1} << 30);
  // The slot takes a new phase.
  MustPrepare(WriteSpec("p2"));
}

TEST_F(PhaseRunnerTest, AbortBeforeTheStartInstant) {
  MustPrepare(WriteSpec("p1"));
  // Run polls `gone` while it waits for the start instant.
  std::promise<void> waiting;
  std::atomic<bool> signalled{false};
  auto gone = [&] {
    if (!signalled.exchange(true)) waiting.set_value();
    return false;
  };
  std::future<common::StatusOr<PhaseResult>> result = std::async(std::launch::async, [&] {
    return runner_->Run(RunNow("p1", 10'000'000'000), caller_, KeepListening, gone);
  });
  ASSERT_EQ(waiting.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  common::StatusOr<CleanupReport> cleanup = Cleanup("p1");
  EXPECT_EQ(cleanup.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(cleanup.status().message(), HasSubstr("running; Abort it instead"));

  EXPECT_TRUE(Abort("p1"));
  ASSERT_EQ(result.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  common::StatusOr<PhaseResult> r = result.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->state(), PhaseResult::ABORTED);
  EXPECT_THAT(r->error(), HasSubstr("before it started"));
  EXPECT_THAT(r->error(), HasSubstr("aborted by the controller"));
  EXPECT_EQ(r->bytes(), 0u);
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseRunnerTest, AbortOfAPreparedPhaseFreesTheSlot) {
  MustPrepare(WriteSpec("p1"));
  EXPECT_TRUE(Abort("p1"));
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_FALSE(Abort("p1"));
}

TEST_F(PhaseRunnerTest, RunWhoseCallerIsGoneBeforeTheStartFreesTheSlot) {
  MustPrepare(WriteSpec("p1"));
  auto gone = [] { return true; };
  common::StatusOr<PhaseResult> result =
      runner_->Run(RunNow("p1", 5'000'000'000), caller_, KeepListening, gone);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), PhaseResult::ABORTED);
  EXPECT_THAT(result->error(), HasSubstr("went away"));
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  MustPrepare(WriteSpec("p2"));
}

TEST_F(PhaseRunnerTest, RunWhoseCallerGoesDuringTheRunFreesTheSlot) {
  MustPrepare(WriteSpec("p1", uint64_t{1} << 30, 4096));
  std::atomic<int> polls{0};
  // Present while waiting for the start, gone a few polls into the run.
  auto gone = [&] { return ++polls > 3; };
  common::StatusOr<PhaseResult> result = runner_->Run(RunNow("p1"), caller_, KeepListening, gone);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), PhaseResult::ABORTED);
  EXPECT_THAT(result->error(), HasSubstr("went away"));
  EXPECT_LT(result->bytes(), uint64_t{1} << 30);
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseRunnerTest, RunThatEndsByItselfAsItsCallerGoesSaysSoAndFreesTheSlot) {
  // A timed read runs its 0.3 s while the first progress report is being sent; only then does
  // that report find nobody listening (as when an agent resumes after SIGSTOP and its
  // workload's time is already up).
  MustPrepare(RandioReadSpec("p1", 1, 300'000'000));
  auto gone_while_reporting = [](const stormark::v1::RunUpdate::Progress&) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    return false;
  };
  common::StatusOr<PhaseResult> result =
      runner_->Run(RunNow("p1"), caller_, gone_while_reporting, StillHere);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->state(), PhaseResult::SUCCEEDED) << result->error();
  EXPECT_GT(result->ops(), 0u);
  EXPECT_EQ(result->error(), "the controller went away before taking the result");
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PhaseRunnerTest, CleanupRemovesFilesAndIsIdempotent) {
  MustPrepare(WriteSpec("p1"));
  ASSERT_TRUE(runner_->Run(RunNow("p1"), caller_, KeepListening, StillHere).ok());
  common::StatusOr<CleanupReport> removed = Cleanup("p1");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->removed, 2);  // stream.dat and the phase directory.
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_EQ(runner_->BusyWith(), "");

  removed = Cleanup("p1");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->removed, 0);
  removed = Cleanup("never-prepared");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->removed, 0);
}

TEST_F(PhaseRunnerTest, CleanupOfAPreparedPhaseFreesTheSlot) {
  MustPrepare(WriteSpec("p1"));
  common::StatusOr<CleanupReport> removed = Cleanup("p1");
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->removed, 2);
  MustPrepare(WriteSpec("p2"));
}

TEST_F(PhaseRunnerTest, CleanupOfAnotherPhaseIsRefused) {
  MustPrepare(WriteSpec("p1"));
  common::StatusOr<CleanupReport> removed = Cleanup("p2");
  ASSERT_FALSE(removed.ok());
  EXPECT_EQ(removed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(removed.status().message(), HasSubstr("holds 'p1'"));
  EXPECT_EQ(runner_->BusyWith(), "p1");
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-p1"));
}

TEST_F(PhaseRunnerTest, ShutdownRemovesFilesAndRefusesLaterPrepares) {
  MustPrepare(WriteSpec("p1"));
  runner_->Shutdown();
  EXPECT_EQ(runner_->BusyWith(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  common::StatusOr<stormark::v1::PrepareReply> reply = runner_->Prepare(WriteSpec("p2"), caller_);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(PhaseRunnerTest, DestructorRemovesTheHeldPhasesFiles) {
  MustPrepare(WriteSpec("p1"));
  runner_.reset();
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

}  // namespace
}  // namespace stormark::agent
