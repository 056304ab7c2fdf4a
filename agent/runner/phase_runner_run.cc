// A phase's run: the wait for its Start and its instant, the timed region on a worker of its
// own, the watch over it, and the result.
#include "agent/runner/phase_runner.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/match.h"
#include "agent/host/disk_counters.h"
#include "agent/host/memory_cgroup.h"
#include "agent/runner/run_result.h"
#include "agent/runner/thread_top.h"
#include "agent/runner/worker_watch.h"
#include "agent/workloads/workload_registry.h"
#include "common/log_text.h"
#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using stormark::v1::PhaseResult;

// A start instant further ahead than this means the clocks or the request are wrong.
constexpr int64_t kMaxStartDelayNanos = 60'000'000'000;

// A start further ahead than kMaxStartDelayNanos is a clock far off, not a plan.
Status CheckStartAhead(int64_t ahead_nanos) {
  if (ahead_nanos <= kMaxStartDelayNanos) return absl::OkStatus();
  return absl::InvalidArgumentError(fmt::format(
      "start time is {:.1f} s ahead of this agent's clock (limit 60 s): are the clocks far apart?",
      static_cast<double>(ahead_nanos) / 1e9));
}

// How often a running phase looks for a caller that has gone, its lease and stalled I/O (at
// most: progress may be asked for more often).
constexpr int64_t kRunPollNanos = 100'000'000;
// The same for a phase waiting for its Start (seconds, while the other hosts prepare) or for
// its start instant: a Start or an abort wakes it at once, and a thousand agents on one machine
// polling every 20 ms would be 50,000 wake-ups a second, starving the controller's fan-out.
constexpr int64_t kArmedPollNanos = 200'000'000;

}  // namespace

// The timed part of a run, shared with its worker thread, which outlives Run() when it is
// stuck in the kernel.
struct PhaseRunner::RunShared {
  RunShared(const common::Clock& clock, std::shared_ptr<Lasting> lasting,
            int64_t series_interval_nanos)
      : lasting(std::move(lasting)),
        recorders(clock.MonotonicNanos(), series_interval_nanos),
        region(clock, recorders),
        start(clock, region, this->lasting->cancelled),
        ctx{clock, this->lasting->cancelled, recorders, region, &start} {}
  const std::shared_ptr<Lasting> lasting;  // Holds the cancel flag ctx refers to.
  common::RecorderSet recorders;
  TimedRegion region;
  StartGate start;
  RunContext ctx;
  // The target's disk counters as the region opened (written by the run's thread, read once
  // it is done).
  std::optional<DiskCounters> disk_before;
};

Status PhaseRunner::Start(const std::string& phase_id, const std::string& token,
                          const Identity& caller, int64_t start_at_unix_nanos) {
  absl::MutexLock lock(&mu_);
  if (state_ == State::kIdle || spec_.phase_id() != phase_id) {
    return absl::FailedPreconditionError(
        common::StrCat("phase '", common::LogSafe(phase_id), "' is not prepared on this agent"));
  }
  RETURN_IF_ERROR(owner_.Check(caller.name, token, "start", phase_id));
  if (state_ != State::kRunning || !awaiting_start_ || start_at_unix_ != 0) {
    return absl::FailedPreconditionError(common::StrCat(
        "phase '", common::LogSafe(phase_id), "' is not armed for a start: it is ",
        state_ == State::kRunning ? (start_at_unix_ != 0 ? "started already" : "running")
                                  : StateName(state_)));
  }
  if (start_at_unix_nanos <= 0) {
    return absl::InvalidArgumentError("the start instant is missing");
  }
  RETURN_IF_ERROR(CheckStartAhead(start_at_unix_nanos - clock_.NowUnixNanos()));
  start_at_unix_ = start_at_unix_nanos;
  state_changed_.NotifyAll();
  return absl::OkStatus();
}

StatusOr<PhaseResult> PhaseRunner::Run(const stormark::v1::RunRequest& request,
                                       const Identity& caller, const ProgressFn& progress,
                                       const GoneFn& gone, const ArmedFn& armed) {
  Workload* workload = nullptr;
  int64_t interval_nanos = 0;
  int64_t series_nanos = 0;
  std::string target;
  std::string disk;  // The disk under the target ("vda"), for its own counters; "" when none.
  stormark::v1::PhaseSpec spec;
  std::string target_identity;
  std::string what;  // "randio run", for an error that escapes the workload
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kIdle || spec_.phase_id() != request.phase_id()) {
      return absl::FailedPreconditionError(common::StrCat(
          "phase '", common::LogSafe(request.phase_id()), "' is not prepared on this agent",
          state_ == State::kIdle ? "" : common::StrCat(" (it holds '", spec_.phase_id(), "')")));
    }
    RETURN_IF_ERROR(owner_.Check(caller.name, request.phase_token(), "run", request.phase_id()));
    if (state_ != State::kPrepared) {
      return absl::FailedPreconditionError(
          common::StrCat("phase '", common::LogSafe(request.phase_id()), "' cannot run: it is ",
                         StateName(state_)));
    }
    if (!request.await_start()) {
      RETURN_IF_ERROR(CheckStartAhead(request.start_at_unix_nanos() - clock_.NowUnixNanos()));
    }
    state_ = State::kRunning;
    awaiting_start_ = request.await_start();
    start_at_unix_ = request.await_start() ? 0 : request.start_at_unix_nanos();
    workload = workload_.get();
    target = spec_.target();
    target_identity = target_identity_;
    what = common::StrCat(common::WorkloadName(spec_), " run");
    const uint32_t ms = spec_.progress_interval_ms() == 0 ? 1000 : spec_.progress_interval_ms();
    interval_nanos = static_cast<int64_t>(ms) * 1'000'000;
    const uint32_t series_ms = spec_.series_interval_ms() == 0 ? 1000 : spec_.series_interval_ms();
    series_nanos = static_cast<int64_t>(series_ms) * 1'000'000;
    if (auto it = target_environment_.find("device"); it != target_environment_.end()) {
      disk = it->second;
    }
    spec = spec_;
  }

  PhaseResult result;
  bool caller_gone = false;
  // The run's thread exists before the wait, and waits for the instant itself (StartGate):
  // at the instant it is the one thread of this agent that wakes, and a workload that
  // StartsItself has its own threads ready too. At a thousand agents on a few cores, what
  // each does at the instant, one after another, is how late the last one starts.
  auto shared = std::make_shared<RunShared>(clock_, lasting_, series_nanos);
  const bool starts_itself = workload->StartsItself();
  // Any other workload is called with its region open, and has no gate to wait at.
  if (!starts_itself) shared->ctx.start = nullptr;
  // The worker holds `shared` and, when it is left stuck, frees the slot on its return.
  auto worker = DetachedWorker::Start(
      [shared, workload, what, starts_itself]() -> Status {
        Status status = absl::CancelledError("the run did not begin");
        if (starts_itself || shared->start.AwaitStart()) {
          status = CatchAtThreadTop(what, [&] { return workload->Run(shared->ctx); });
        }
        shared->start.RunEnded();
        return status;
      },
      [this] { ReleaseStuck(); });
  auto lease_expired = [this] {
    absl::MutexLock lock(&mu_);
    return LeaseExpiredLocked();
  };

  // An armed phase waits for its Start, watching for an abort. It is armed (the controller
  // may send the Start) once the run is ready for the instant: a workload that cannot start
  // its threads (out of threads or memory) fails here, and no Start races it for them.
  int64_t start_at = request.start_at_unix_nanos();
  bool ended_unready = false;
  if (request.await_start()) {
    // A worker whose thread never started is done at once, and never ready.
    while (!worker->done() && !shared->start.AwaitReady(kArmedPollNanos)) {
      if (lease_expired()) cancelled_ = true;
      if (gone()) {
        caller_gone = true;
        break;
      }
    }
    ended_unready = !caller_gone && !shared->start.ready();
    // An abort (or the lease's end) while the threads were being made: not armed, and the
    // wait below ends at once.
    if (!caller_gone && !ended_unready && !cancelled_ && armed && !armed()) caller_gone = true;
    auto started = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return start_at_unix_ != 0 || cancelled_;
    };
    mu_.Lock();
    while (!caller_gone && !ended_unready &&
           !state_changed_.WaitFor(mu_, kArmedPollNanos, started)) {
      if (LeaseExpiredLocked()) cancelled_ = true;
      mu_.Unlock();
      caller_gone = gone();
      mu_.Lock();
    }
    awaiting_start_ = false;
    start_at = start_at_unix_;
    mu_.Unlock();
  }
  if (caller_gone || cancelled_) {
    cancelled_ = true;
    shared->start.CallOff();
  } else if (ended_unready) {
    shared->start.CallOff();
  } else {
    RunShared* run = shared.get();
    const std::string sys_class_block = paths_.sys_class_block;
    shared->start.Open(start_at, [run, disk, sys_class_block] {
      if (!disk.empty()) run->disk_before = ReadDiskCounters(sys_class_block, disk);
    });
  }
  // Until the run begins (or should it never), watch for an abort, the caller and the lease;
  // in long steps, not at the instant: every agent of a fleet waits here at once. An abort
  // sets cancelled_, which the run's thread checks before it begins.
  while (!shared->start.begun() && !worker->WaitFor(kArmedPollNanos)) {
    if (!caller_gone && gone()) {
      caller_gone = true;
      cancelled_ = true;
    }
    if (lease_expired()) cancelled_ = true;
  }

  std::string stuck_in;
  std::shared_ptr<DetachedWorker> stuck_worker;
  if (shared->start.begun()) {
    const int64_t start_late = shared->start.start_late_nanos();
    stuck_in = AwaitWorker(*worker, *shared, interval_nanos, progress, gone, &caller_gone);
    if (stuck_in.empty()) {
      shared->region.Close();
    } else {
      stuck_worker = worker;
    }
    const TimedRegion::Span span = shared->region.span();
    const int64_t end_mono = stuck_in.empty() ? span.end_mono : clock_.MonotonicNanos();
    result.set_start_unix_nanos(span.start_unix);
    result.set_end_unix_nanos(span.start_unix + (end_mono - span.start_mono));
    result.set_start_late_nanos(start_late);
    if (stuck_in.empty()) {
      result.set_cpu_user_nanos(span.cpu_end.user_nanos - span.cpu_start.user_nanos);
      result.set_cpu_system_nanos(span.cpu_end.system_nanos - span.cpu_start.system_nanos);
      FillResult(worker->status(), shared->recorders, span.start_mono, span.end_mono, &result);
      workload->AddToResult(&result);
      if (shared->disk_before) {
        if (auto after = ReadDiskCounters(paths_.sys_class_block, disk)) {
          AddDiskFigures(disk, *shared->disk_before, *after, spec, &result);
        }
      }
      // A failed run may have lost writes it was told were done (a device error, a lost
      // connection): only a run that ended or was stopped adds what it wrote.
      if (result.state() != PhaseResult::FAILED) {
        RecordWritten(target, request.phase_id(), target_identity, *workload);
      }
    } else {
      // The stuck thread still records; the figures so far are a snapshot, not a result.
      result.set_bytes(shared->recorders.TotalBytes());
      result.set_ops(shared->recorders.TotalOps());
      result.set_elapsed_nanos(end_mono - span.start_mono);
      result.set_state(PhaseResult::FAILED);
      result.set_stuck_worker(stuck_in);
      absl::MutexLock lock(&mu_);
      result.set_error(fmt::format(
          "worker stuck in the kernel in {}; the I/O may never return (stopped because: {}). "
          "This agent takes no new phase until it does",
          stuck_in, abort_reason_.empty() ? "the phase was aborted" : abort_reason_));
    }
  } else if (const Status status = worker->status();
             !status.ok() && !absl::IsCancelled(status) && !caller_gone && !cancelled_) {
    // Its threads could not be made ready (out of threads or memory): nothing ran.
    result.set_state(PhaseResult::FAILED);
    result.set_error(std::string(status.message()));
  } else {
    absl::MutexLock lock(&mu_);
    result.set_state(PhaseResult::ABORTED);
    result.set_error(abort_reason_.empty() ? "phase aborted before it started"
                                           : abort_reason_ + ", before it started");
  }
  {
    absl::MutexLock lock(&mu_);
    result.mutable_host_environment()->insert(host_environment_.begin(), host_environment_.end());
    result.mutable_target_environment()->insert(target_environment_.begin(),
                                                target_environment_.end());
  }
  if (caller_gone && result.state() == PhaseResult::ABORTED) {
    result.set_error("the controller went away during the phase");
  } else if (caller_gone && stuck_in.empty()) {
    // The workload ended by itself as the caller left: nobody takes this result, and the
    // agent's log is the only place that says so (and keeps a failure's own error).
    constexpr std::string_view kGone = "the controller went away before taking the result";
    result.set_error(result.error().empty() ? std::string(kGone)
                                            : common::StrCat(result.error(), "; ", kGone));
  }

  std::unique_ptr<Workload> released;
  {
    absl::MutexLock lock(&mu_);
    if (!stuck_in.empty()) {
      // The worker frees the slot when (if) it returns; see ReleaseStuck.
      state_ = State::kStuck;
      stuck_in_ = stuck_in.substr(0, stuck_in.rfind(" for "));
      stuck_since_mono_ = clock_.MonotonicNanos();
      stuck_worker_ = stuck_worker;
      state_changed_.NotifyAll();
    } else if (caller_gone) {
      // Nobody will call Cleanup: free the slot now.
      released = BeginCleanupLocked();
    } else {
      state_ = State::kFinished;
      last_touched_mono_ = clock_.MonotonicNanos();
      state_changed_.NotifyAll();
    }
  }
  if (stuck_in.empty() && caller_gone) FinishCleanup(std::move(released));
  // The worker may have returned before the slot was marked stuck; then free it here.
  if (stuck_worker && stuck_worker->done()) ReleaseStuck();
  return result;
}

std::string PhaseRunner::AwaitWorker(DetachedWorker& worker, RunShared& shared,
                                     int64_t interval_nanos, const ProgressFn& progress,
                                     const GoneFn& gone, bool* caller_gone) {
  common::RecorderSet& recorders = shared.recorders;
  const int64_t start = shared.region.start_mono();
  int64_t next_progress = start + interval_nanos;
  WorkerWatch watch(start, config_.stalled_io_after_nanos, config_.stuck_worker_after_nanos,
                    paths_.proc_self);
  // The worker's end wakes this wait at once; the steps are for progress, a caller gone, the
  // lease and stalled I/O, none of which needs 20 ms: a running fleet of a thousand agents on
  // one machine would spend a quarter of two cores waking up for them.
  const int64_t step = std::min(interval_nanos, kRunPollNanos);
  for (;;) {
    if (worker.WaitFor(step)) return "";
    const int64_t now = clock_.MonotonicNanos();
    if (!*caller_gone && gone()) {
      *caller_gone = true;
      cancelled_ = true;
    }
    {
      absl::MutexLock lock(&mu_);
      if (LeaseExpiredLocked()) cancelled_ = true;
    }
    const int64_t max_runtime = config_.limits.max_runtime_nanos;
    if (max_runtime > 0 && !cancelled_ && now - start > max_runtime) StopForRuntimeCap(max_runtime);
    // Stalled I/O: nothing completed for a long time while a thread sits in the kernel.
    const uint64_t ops = recorders.TotalOps();
    watch.Progress(now, ops);
    if (!cancelled_) {
      if (std::string stalled = watch.Stalled(now); !stalled.empty()) {
        absl::MutexLock lock(&mu_);
        if (abort_reason_.empty()) abort_reason_ = std::move(stalled);
        cancelled_ = true;
      }
    }
    if (cancelled_) {
      // Told to stop long ago and not back: stuck if a thread is in the kernel for good.
      if (std::string stuck = watch.Stuck(now); !stuck.empty()) {
        return worker.Abandon() ? stuck : "";
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

void PhaseRunner::FillResult(const Status& status, const common::RecorderSet& recorders,
                             int64_t start_mono, int64_t end_mono, PhaseResult* result) {
  std::string abort_reason, hint;
  Status explained = status;
  {
    absl::MutexLock lock(&mu_);
    hint = TooFastHint(spec_);
    for (const auto& w : warnings_) result->add_warnings(w);
    if (memory_cgroup_ != nullptr) {
      // A memory-limited phase whose kernel memory filled the limit (memory_cgroup.h, "When
      // the limit is full"): the ENOMEM gets the why, the follower's steps a warning.
      if (std::string relief = memory_cgroup_->DescribeRelief(); !relief.empty()) {
        result->add_warnings(relief);
      }
      if (!status.ok() && absl::StrContains(status.message(), std::strerror(ENOMEM))) {
        if (std::string why = memory_cgroup_->DescribeExhaustion(); !why.empty()) {
          explained = Status(status.code(), common::StrCat(status.message(), " (", why, ")"));
        }
      }
    }
    *result->mutable_cache() = cache_report_;
    if (tuning_)
      result->mutable_tuning()->insert(tuning_->report().begin(), tuning_->report().end());
    abort_reason = abort_reason_;
  }
  FillRunResult(explained, cancelled_, abort_reason, recorders, start_mono, end_mono, result, hint);
}

}  // namespace stormark::agent
