#include "agent/phase_runner.h"

#include <chrono>
#include <thread>

#include "common/cache_report.h"
#include "common/strings.h"
#include "agent/kernel_waits.h"
#include "agent/workloads/factory.h"
#include "common/cpu_times.h"
#include "common/units.h"
#include "fmt/format.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using stormark::v1::PhaseResult;

// A run shorter than this is reported as too fast to time, as bonnie++ does.
constexpr int64_t kTooFastNanos = 500'000'000;
// A start instant further ahead than this means the clocks or the request are wrong.
constexpr int64_t kMaxStartDelayNanos = 60'000'000'000;
// How often a waiting or running phase looks for a caller that has gone.
constexpr int64_t kPollNanos = 20'000'000;

double Seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

}  // namespace

// The timed part of a run, shared with its worker thread, which outlives Run() when it is
// stuck in the kernel.
struct PhaseRunner::RunShared {
  RunShared(const common::Clock& clock, const std::atomic<bool>& cancelled)
      : recorders(clock.MonotonicNanos()),
        region(clock, recorders),
        ctx{clock, cancelled, recorders, region} {}
  common::RecorderSet recorders;
  TimedRegion region;
  RunContext ctx;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;      // Guarded by mu.
  bool abandoned = false; // Guarded by mu; Run() left, the worker frees the slot.
  Status status;          // Guarded by mu.
};

PhaseRunner::PhaseRunner(AgentConfig config, HostFacts host, const common::Clock& clock,
                         int64_t reclaim_after_nanos, SystemPaths paths)
    : config_(std::move(config)),
      host_(std::move(host)),
      clock_(clock),
      reclaim_after_nanos_(reclaim_after_nanos),
      paths_(std::move(paths)),
      page_cache_(clock, paths_.drop_caches) {}

PhaseRunner::~PhaseRunner() {
  Shutdown();
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kStuck) return;
  // The stuck thread may still return and use its workload: leave both to the process's end.
  {
    std::lock_guard<std::mutex> run_lock(stuck_run_->mu);
    stuck_run_->abandoned = false;  // It must not call back into this runner.
  }
  (void)workload_.release();
}

const char* PhaseRunner::StateName(State state) {
  switch (state) {
    case State::kIdle:
      return "idle";
    case State::kPreparing:
      return "preparing";
    case State::kPrepared:
      return "prepared";
    case State::kRunning:
      return "running";
    case State::kFinished:
      return "finished, awaiting cleanup";
    case State::kCleaning:
      return "removing its files";
    case State::kStuck:
      return "stopped, with a worker stuck in the kernel";
  }
  return "unknown";
}

std::string PhaseRunner::BusyWith() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ == State::kIdle ? "" : spec_.phase_id();
}

std::unique_ptr<Workload> PhaseRunner::BeginCleanupLocked() {
  state_ = State::kCleaning;
  state_changed_.notify_all();
  return std::move(workload_);
}

int PhaseRunner::FinishCleanup(std::unique_ptr<Workload> workload) {
  const int removed = workload ? workload->Cleanup() : 0;
  workload.reset();
  std::unique_ptr<DeviceTuning> tuning;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tuning = std::move(tuning_);
  }
  tuning.reset();  // Restores the device's settings, outside the lock (sysfs writes).
  std::lock_guard<std::mutex> lock(mu_);
  warnings_.clear();
  stuck_in_.clear();
  stuck_run_.reset();
  cache_report_.Clear();
  host_environment_.clear();
  target_environment_.clear();
  spec_.Clear();
  state_ = State::kIdle;
  cancelled_ = false;
  abort_reason_.clear();
  state_changed_.notify_all();
  return removed;
}

bool PhaseRunner::LeaseExpiredLocked() {
  const int64_t lease = int64_t{spec_.heartbeat_timeout_ms()} * 1'000'000;
  if (lease == 0 || state_ == State::kIdle || state_ == State::kStuck) return false;
  const int64_t silent = clock_.MonotonicNanos() - last_heartbeat_mono_;
  if (silent < lease) return false;
  if (abort_reason_.empty()) {
    abort_reason_ = fmt::format(
        "no heartbeat from the controller for {:.1f} s (its lease is {:.1f} s): it is gone or "
        "cut off",
        Seconds(silent), Seconds(lease));
  }
  return true;
}

std::string PhaseRunner::Heartbeat(const std::string& phase_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == State::kIdle) return "";
  if (!phase_id.empty() && phase_id == spec_.phase_id()) {
    last_heartbeat_mono_ = clock_.MonotonicNanos();
  }
  return spec_.phase_id();
}

std::string PhaseRunner::StuckWorker() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kStuck) return "";
  return fmt::format("{} for {:.0f} s", stuck_in_,
                     Seconds(clock_.MonotonicNanos() - stuck_since_mono_));
}

std::unique_ptr<Workload> PhaseRunner::ReleaseIfAbandonedLocked(std::string* note) {
  if (state_ != State::kPrepared && state_ != State::kFinished) return nullptr;
  if (LeaseExpiredLocked()) {
    *note = fmt::format("removed phase '{}': {}", spec_.phase_id(), abort_reason_);
    return BeginCleanupLocked();
  }
  const int64_t idle = clock_.MonotonicNanos() - last_touched_mono_;
  if (idle < reclaim_after_nanos_) return nullptr;
  *note = fmt::format("removed abandoned phase '{}' (untouched for {:.0f} s)", spec_.phase_id(),
                      static_cast<double>(idle) / 1e9);
  return BeginCleanupLocked();
}

std::string PhaseRunner::ReclaimAbandoned() {
  std::string note, phase;
  std::unique_ptr<Workload> abandoned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    phase = spec_.phase_id();
    abandoned = ReleaseIfAbandonedLocked(&note);
  }
  if (!abandoned) return "";
  FinishCleanup(std::move(abandoned));
  return phase;
}

StatusOr<std::unique_ptr<DeviceTuning>> PhaseRunner::ApplyTuning(
    const stormark::v1::PhaseSpec& spec) const {
  std::string knobs;
  for (const auto& [knob, value] : spec.tuning()) knobs += (knobs.empty() ? "" : ", ") + knob;
  if (!config_.allow_tuning) {
    return absl::PermissionDeniedError(common::StrCat(
        "tuning (", knobs, ") is not allowed on this agent: its config must set allow_tuning: true"));
  }
  const TargetConfig* target = config_.FindTarget(spec.target());
  if (target == nullptr) return absl::NotFoundError(common::StrCat("no target '", spec.target(), "'"));
  const std::string device = ReadTargetFacts(*target, paths_).device();
  std::map<std::string, std::string> settings(spec.tuning().begin(), spec.tuning().end());
  auto applied = DeviceTuning::Apply(device, settings, paths_.sys_class_block);
  if (!applied.ok()) {
    return common::Annotate(applied.status(), common::StrCat("target '", target->name, "'"));
  }
  return applied;
}

StatusOr<stormark::v1::PrepareReply> PhaseRunner::Prepare(const stormark::v1::PhaseSpec& spec,
                                                         const GoneFn& gone) {
  std::vector<std::string> warnings;
  std::unique_ptr<Workload> abandoned;
  std::string note;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return absl::UnavailableError("agent is shutting down");
    abandoned = ReleaseIfAbandonedLocked(&note);
  }
  if (abandoned) {
    FinishCleanup(std::move(abandoned));
    warnings.push_back(note);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return absl::UnavailableError("agent is shutting down");
    if (state_ == State::kStuck) {
      return absl::UnavailableError(fmt::format(
          "a worker of phase '{}' is stuck in the kernel ({} for {:.0f} s): this agent takes no "
          "new phase until that I/O returns (is the device or its network gone? restart the "
          "agent once it is back, or reboot)",
          spec_.phase_id(), stuck_in_, Seconds(clock_.MonotonicNanos() - stuck_since_mono_)));
    }
    if (state_ != State::kIdle) {
      return absl::FailedPreconditionError(common::StrCat(
          "agent is busy with phase '", spec_.phase_id(), "' (", StateName(state_),
          "); an agent runs one phase at a time: wait for it, or Abort it"));
    }
    state_ = State::kPreparing;
    spec_ = spec;
    cancelled_ = false;
    abort_reason_.clear();
    last_heartbeat_mono_ = clock_.MonotonicNanos();
    ++generation_;
  }

  // A caller that goes away during a long set-up cancels it.
  std::mutex watch_mu;
  std::condition_variable watch_cv;
  bool prepared = false;  // Guarded by watch_mu.
  std::thread watcher;
  {
    watcher = std::thread([&] {
      std::unique_lock<std::mutex> lock(watch_mu);
      while (!watch_cv.wait_for(lock, std::chrono::nanoseconds(kPollNanos),
                                [&] { return prepared; })) {
        bool expired = false;
        {
          std::lock_guard<std::mutex> state_lock(mu_);
          expired = LeaseExpiredLocked();
        }
        if (expired || (gone && gone())) {
          cancelled_ = true;
          return;
        }
      }
    });
  }
  // The policy first: a refused phase creates nothing.
  Status allowed = CheckPolicy(spec, config_, host_);
  StatusOr<std::unique_ptr<Workload>> workload =
      allowed.ok() ? MakeWorkload(spec, config_, host_) : allowed;
  Status status = workload.status();
  std::unique_ptr<DeviceTuning> tuning;
  if (status.ok() && !spec.tuning().empty()) {
    auto applied = ApplyTuning(spec);
    status = applied.status();
    if (applied.ok()) tuning = std::move(*applied);
  }
  if (status.ok()) status = (*workload)->Prepare(cancelled_, &warnings);
  // The cache is settled last, so that nothing the set-up wrote or read is left in it.
  stormark::v1::CacheReport cache_report;
  if (status.ok() && !cancelled_) {
    cache_report = page_cache_.Apply(spec.cache(), config_.allow_drop_caches);
    if (!cache_report.not_done().empty()) {
      warnings.push_back(common::DescribeCacheReport(cache_report));
    }
  }
  // The environment the phase runs in: after the hooks, the tuning and the cache.
  Environment host_environment, target_environment;
  if (status.ok() && !cancelled_) {
    host_environment = ReadHostEnvironment(host_, paths_);
    if (const TargetConfig* target = config_.FindTarget(spec.target())) {
      target_environment = TargetEnvironment(ReadTargetFacts(*target, paths_));
    }
  }
  if (watcher.joinable()) {
    {
      std::lock_guard<std::mutex> lock(watch_mu);
      prepared = true;
    }
    watch_cv.notify_all();
    watcher.join();
  }

  std::unique_lock<std::mutex> lock(mu_);
  if (status.ok() && cancelled_) status = absl::CancelledError("phase aborted while preparing");
  if (!status.ok()) {
    BeginCleanupLocked();
    lock.unlock();
    FinishCleanup(workload.ok() ? std::move(*workload) : nullptr);
    tuning.reset();  // Restores the device's settings.
    return status;
  }
  workload_ = std::move(*workload);
  tuning_ = std::move(tuning);
  warnings_ = warnings;
  cache_report_ = cache_report;
  host_environment_ = std::move(host_environment);
  target_environment_ = std::move(target_environment);
  state_ = State::kPrepared;
  last_touched_mono_ = clock_.MonotonicNanos();
  state_changed_.notify_all();

  stormark::v1::PrepareReply reply;
  reply.set_prepared_unix_nanos(clock_.NowUnixNanos());
  for (const auto& w : warnings) reply.add_warnings(w);
  return reply;
}

StatusOr<PhaseResult> PhaseRunner::Run(const stormark::v1::RunRequest& request,
                                       const ProgressFn& progress, const GoneFn& gone) {
  Workload* workload = nullptr;
  int64_t interval_nanos = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kIdle || spec_.phase_id() != request.phase_id()) {
      return absl::FailedPreconditionError(common::StrCat(
          "phase '", request.phase_id(), "' is not prepared on this agent",
          state_ == State::kIdle ? "" : common::StrCat(" (it holds '", spec_.phase_id(), "')")));
    }
    if (state_ != State::kPrepared) {
      return absl::FailedPreconditionError(common::StrCat("phase '", request.phase_id(),
                                                        "' cannot run: it is ", StateName(state_)));
    }
    const int64_t ahead = request.start_at_unix_nanos() - clock_.NowUnixNanos();
    if (ahead > kMaxStartDelayNanos) {
      return absl::InvalidArgumentError(fmt::format(
          "start time is {:.1f} s ahead of this agent's clock (limit 60 s): are the clocks "
          "far apart?",
          static_cast<double>(ahead) / 1e9));
    }
    state_ = State::kRunning;
    workload = workload_.get();
    const uint32_t ms = spec_.progress_interval_ms() == 0 ? 1000 : spec_.progress_interval_ms();
    interval_nanos = static_cast<int64_t>(ms) * 1'000'000;
  }

  PhaseResult result;
  bool caller_gone = false;
  auto lease_expired = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return LeaseExpiredLocked();
  };

  // Wait for the common start instant, watching for an abort.
  while (!clock_.SleepUntilUnixNanos(request.start_at_unix_nanos(), kPollNanos)) {
    if (gone()) caller_gone = true;
    if (lease_expired()) cancelled_ = true;
    if (caller_gone || cancelled_) break;
  }

  std::string stuck_in;
  std::shared_ptr<RunShared> stuck_shared;
  if (!caller_gone && !cancelled_) {
    auto shared = std::make_shared<RunShared>(clock_, cancelled_);
    // How late the start was is measured as Run begins, before any warm-up.
    const int64_t start_late = shared->region.span().start_unix - request.start_at_unix_nanos();
    // The worker holds `shared` and, when it is left stuck, frees the slot on its return.
    std::thread([this, shared, workload] {
      Status s = workload->Run(shared->ctx);
      bool abandoned = false;
      {
        std::lock_guard<std::mutex> lock(shared->mu);
        shared->status = std::move(s);
        shared->done = true;
        abandoned = shared->abandoned;
        shared->done_cv.notify_all();
      }
      if (abandoned) ReleaseStuck();
    }).detach();
    stuck_in = AwaitWorker(shared, interval_nanos, progress, gone, &caller_gone);
    if (stuck_in.empty()) {
      shared->region.Close();
    } else {
      stuck_shared = shared;
    }
    const TimedRegion::Span span = shared->region.span();
    const int64_t end_mono = stuck_in.empty() ? span.end_mono : clock_.MonotonicNanos();
    result.set_start_unix_nanos(span.start_unix);
    result.set_end_unix_nanos(span.start_unix + (end_mono - span.start_mono));
    result.set_start_late_nanos(start_late);
    if (stuck_in.empty()) {
      result.set_cpu_user_nanos(span.cpu_end.user_nanos - span.cpu_start.user_nanos);
      result.set_cpu_system_nanos(span.cpu_end.system_nanos - span.cpu_start.system_nanos);
      Status status;
      {
        std::lock_guard<std::mutex> lock(shared->mu);
        status = shared->status;
      }
      FillResult(status, shared->recorders, span.start_mono, span.end_mono, &result);
      workload->AddToResult(&result);
    } else {
      // The stuck thread still records; the figures so far are a snapshot, not a result.
      result.set_bytes(shared->recorders.TotalBytes());
      result.set_ops(shared->recorders.TotalOps());
      result.set_elapsed_nanos(end_mono - span.start_mono);
      result.set_state(PhaseResult::FAILED);
      result.set_stuck_worker(stuck_in);
      std::lock_guard<std::mutex> lock(mu_);
      result.set_error(fmt::format(
          "worker stuck in the kernel in {}; the I/O may never return (stopped because: {}). "
          "This agent takes no new phase until it does",
          stuck_in, abort_reason_.empty() ? "the phase was aborted" : abort_reason_));
    }
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    result.set_state(PhaseResult::ABORTED);
    result.set_error(abort_reason_.empty() ? "phase aborted before it started"
                                           : abort_reason_ + ", before it started");
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    result.mutable_host_environment()->insert(host_environment_.begin(), host_environment_.end());
    result.mutable_target_environment()->insert(target_environment_.begin(),
                                                target_environment_.end());
  }
  if (caller_gone && result.state() == PhaseResult::ABORTED) {
    result.set_error("the controller went away during the phase");
  }

  std::unique_ptr<Workload> released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stuck_in.empty()) {
      // The worker frees the slot when (if) it returns; see ReleaseStuck.
      state_ = State::kStuck;
      stuck_in_ = stuck_in.substr(0, stuck_in.rfind(" for "));
      stuck_since_mono_ = clock_.MonotonicNanos();
      stuck_run_ = stuck_shared;
      state_changed_.notify_all();
    } else if (caller_gone) {
      // Nobody will call Cleanup: free the slot now.
      released = BeginCleanupLocked();
    } else {
      state_ = State::kFinished;
      last_touched_mono_ = clock_.MonotonicNanos();
      state_changed_.notify_all();
    }
  }
  if (stuck_in.empty() && caller_gone) FinishCleanup(std::move(released));
  if (stuck_shared) {
    // The worker may have returned before the slot was marked stuck; then free it here.
    bool done = false;
    {
      std::lock_guard<std::mutex> lock(stuck_shared->mu);
      done = stuck_shared->done;
    }
    if (done) ReleaseStuck();
  }
  return result;
}

std::string PhaseRunner::AwaitWorker(const std::shared_ptr<RunShared>& shared,
                                     int64_t interval_nanos, const ProgressFn& progress,
                                     const GoneFn& gone, bool* caller_gone) {
  common::RecorderSet& recorders = shared->recorders;
  const int64_t start = shared->region.start_mono();
  int64_t next_progress = start + interval_nanos;
  int64_t stop_asked = 0;  // Monotonic time the workload was told to stop; 0 before.
  uint64_t last_ops = 0;
  int64_t last_op_mono = start;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(shared->mu);
      if (shared->done_cv.wait_for(lock, std::chrono::nanoseconds(kPollNanos),
                                   [&] { return shared->done; })) {
        return "";
      }
    }
    const int64_t now = clock_.MonotonicNanos();
    if (!*caller_gone && gone()) {
      *caller_gone = true;
      cancelled_ = true;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (LeaseExpiredLocked()) cancelled_ = true;
    }
    const int64_t max_runtime = config_.limits.max_runtime_nanos;
    if (max_runtime > 0 && !cancelled_ && now - start > max_runtime) StopForRuntimeCap(max_runtime);
    // Stalled I/O: nothing completed for a long time while a thread sits in the kernel.
    const uint64_t ops = recorders.TotalOps();
    if (ops != last_ops) {
      last_ops = ops;
      last_op_mono = now;
    } else if (!cancelled_ && now - last_op_mono >= config_.stalled_io_after_nanos) {
      const std::vector<KernelWait> waits = ThreadsInKernelWait(paths_.proc_self);
      if (!waits.empty()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (abort_reason_.empty()) {
          abort_reason_ = fmt::format("no I/O completed for {:.0f} s while a worker sits in {}",
                                      Seconds(now - last_op_mono), waits.front().Describe());
        }
        cancelled_ = true;
      }
    }
    if (cancelled_ && stop_asked == 0) stop_asked = now;
    if (stop_asked != 0 && now - stop_asked >= config_.stuck_worker_after_nanos) {
      // Told to stop long ago and not back: stuck if a thread is in the kernel for good.
      const std::vector<KernelWait> waits = ThreadsInKernelWait(paths_.proc_self);
      if (!waits.empty()) {
        std::lock_guard<std::mutex> lock(shared->mu);
        if (shared->done) return "";
        shared->abandoned = true;
        return fmt::format("{} for {:.0f} s", waits.front().Describe(),
                           Seconds(now - std::min(stop_asked, last_op_mono)));
      }
    }
    if (!*caller_gone && now >= next_progress) {
      next_progress += interval_nanos;
      stormark::v1::RunUpdate::Progress p;
      p.set_elapsed_nanos(std::max<int64_t>(0, now - start));
      p.set_bytes(recorders.TotalBytes());
      p.set_ops(ops);
      if (!progress(p)) {
        *caller_gone = true;
        cancelled_ = true;
      }
    }
  }
}

void PhaseRunner::ReleaseStuck() {
  std::unique_ptr<Workload> released;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ != State::kStuck) return;
    released = BeginCleanupLocked();
  }
  FinishCleanup(std::move(released));
}

void PhaseRunner::FillResult(const Status& status, const common::RecorderSet& recorders,
                             int64_t start_mono, int64_t end_mono, PhaseResult* result) {
  const int64_t elapsed = end_mono - start_mono;
  std::unique_ptr<common::Recorder> merged = recorders.Merged();
  result->set_bytes(merged->bytes());
  result->set_ops(merged->ops());
  result->set_elapsed_nanos(elapsed);
  merged->latency().ToProto(result->mutable_latency());
  merged->SeriesToProto(end_mono, result->mutable_series());
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& w : warnings_) result->add_warnings(w);
    *result->mutable_cache() = cache_report_;
    if (tuning_) result->mutable_tuning()->insert(tuning_->report().begin(), tuning_->report().end());
  }
  if (status.ok()) {
    result->set_state(PhaseResult::SUCCEEDED);
    if (elapsed < kTooFastNanos) {
      result->add_warnings(fmt::format(
          "too fast to time: finished in {:.3f} s (under 0.5 s); use a larger size",
          static_cast<double>(elapsed) / 1e9));
    }
  } else if (absl::IsCancelled(status) || cancelled_) {
    result->set_state(PhaseResult::ABORTED);
    std::lock_guard<std::mutex> lock(mu_);
    result->set_error(abort_reason_.empty() ? std::string(status.message()) : abort_reason_);
  } else {
    result->set_state(PhaseResult::FAILED);
    result->set_error(std::string(status.message()));
  }
}

void PhaseRunner::StopForRuntimeCap(int64_t max_runtime) {
  std::lock_guard<std::mutex> lock(mu_);
  if (abort_reason_.empty()) {
    abort_reason_ = common::StrCat("stopped after ",
                                   common::FormatDurationNanos(static_cast<double>(max_runtime)),
                                   ": this agent's limits.max_runtime");
  }
  cancelled_ = true;
}

bool PhaseRunner::Abort(const std::string& phase_id, int64_t max_wait_nanos) {
  std::unique_ptr<Workload> released;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ == State::kIdle) return false;
    if (!phase_id.empty() && phase_id != spec_.phase_id()) return false;
    if (abort_reason_.empty()) {
      abort_reason_ = shut_down_ ? "the agent is shutting down" : "aborted by the controller";
    }
    cancelled_ = true;
    // A preparing or running phase notices the flag and leaves that state by itself; a
    // running phase whose caller went away resets to idle by itself too. Once the slot
    // holds another phase (a new generation), this abort has nothing left to do.
    const uint64_t generation = generation_;
    auto settled = [&] {
      return generation_ != generation ||
             (state_ != State::kPreparing && state_ != State::kRunning &&
              state_ != State::kCleaning);
    };
    if (max_wait_nanos < 0) {
      state_changed_.wait(lock, settled);
    } else if (!state_changed_.wait_for(lock, std::chrono::nanoseconds(max_wait_nanos),
                                        settled)) {
      return true;
    }
    if (generation_ != generation || state_ == State::kIdle) return true;
    if (state_ == State::kStuck) return true;  // Freed by the worker if it ever returns.
    released = BeginCleanupLocked();
  }
  FinishCleanup(std::move(released));
  return true;
}

StatusOr<int> PhaseRunner::Cleanup(const std::string& phase_id) {
  std::unique_lock<std::mutex> lock(mu_);
  if (state_ == State::kIdle) return 0;
  if (phase_id != spec_.phase_id()) {
    return absl::FailedPreconditionError(common::StrCat(
        "cannot clean up phase '", phase_id, "': this agent holds '", spec_.phase_id(), "'"));
  }
  if (state_ == State::kPreparing || state_ == State::kRunning) {
    return absl::FailedPreconditionError(common::StrCat(
        "phase '", phase_id, "' is ", StateName(state_), "; Abort it instead"));
  }
  if (state_ == State::kCleaning) return 0;  // Another call is removing the files already.
  if (state_ == State::kStuck) {
    return absl::UnavailableError(common::StrCat("phase '", phase_id, "' has a worker stuck in ",
                                                 stuck_in_, "; its files are removed when it returns"));
  }
  std::unique_ptr<Workload> released = BeginCleanupLocked();
  lock.unlock();
  return FinishCleanup(std::move(released));
}

void PhaseRunner::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shut_down_ = true;
  }
  constexpr int64_t kShutdownWaitNanos = 10'000'000'000;
  Abort("", kShutdownWaitNanos);
}

}  // namespace stormark::agent
