// How a phase held in the slot ends (phase_runner.h): Abort, Cleanup, the controller's lease
// running out, a phase nobody came back for, a worker back from the kernel, the runtime cap,
// and the agent's shutdown. Each frees the slot through BeginCleanupLocked and FinishCleanup, which
// remove the phase's files and put the device's settings back.
#include "agent/runner/phase_runner.h"

#include "common/log_text.h"
#include "common/strings.h"
#include "common/units.h"
#include "fmt/format.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;

double Seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

}  // namespace

std::unique_ptr<Workload> PhaseRunner::BeginCleanupLocked() {
  state_ = State::kCleaning;
  state_changed_.NotifyAll();
  return std::move(workload_);
}

CleanupReport PhaseRunner::FinishCleanup(std::unique_ptr<Workload> workload) {
  const CleanupReport removed = workload ? workload->Cleanup() : CleanupReport();
  workload.reset();
  std::unique_ptr<DeviceTuning> tuning;
  std::unique_ptr<PhaseMemoryCgroup> memory_cgroup;
  {
    absl::MutexLock lock(&mu_);
    tuning = std::move(tuning_);
    memory_cgroup = std::move(memory_cgroup_);
  }
  tuning.reset();         // Restores the device's settings, outside the lock (sysfs writes).
  memory_cgroup.reset();  // The agent leaves the phase's memory cgroup.
  absl::MutexLock lock(&mu_);
  warnings_.clear();
  stuck_in_.clear();
  stuck_worker_.reset();
  stuck_setup_.reset();
  cache_report_.Clear();
  host_environment_.clear();
  target_environment_.clear();
  spec_.Clear();
  owner_ = PhaseOwner();
  state_ = State::kIdle;
  cancelled_ = false;
  abort_reason_.clear();
  state_changed_.NotifyAll();
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

StatusOr<std::string> PhaseRunner::Heartbeat(const std::string& phase_id, const std::string& token,
                                             const Identity& caller) {
  absl::MutexLock lock(&mu_);
  // Its controller is still there: what it handed over stays for its next phase.
  if (kept_ && caller.name == kept_->owner) kept_->renewed_mono = clock_.MonotonicNanos();
  if (state_ == State::kIdle) return std::string();
  if (!phase_id.empty() && phase_id == spec_.phase_id()) {
    // Only the owner keeps its phase alive: a phase whose controller died is not held on
    // by anyone else's heartbeats.
    Status owned = owner_.Check(caller.name, token, "renew the lease of", phase_id);
    if (!owned.ok()) {
      // One the owner sent while its Prepare was under way, overtaken by the reply (which
      // started the lease afresh): answered, and renews nothing.
      if (token.empty() && caller.name == owner_.identity()) return spec_.phase_id();
      return owned;
    }
    last_heartbeat_mono_ = clock_.MonotonicNanos();
  }
  return spec_.phase_id();
}

std::string PhaseRunner::StuckWorker() const {
  absl::MutexLock lock(&mu_);
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
    absl::MutexLock lock(&mu_);
    phase = spec_.phase_id();
    abandoned = ReleaseIfAbandonedLocked(&note);
  }
  if (!abandoned) return "";
  FinishCleanup(std::move(abandoned));
  return phase;
}

StatusOr<bool> PhaseRunner::Abort(const std::string& phase_id, const std::string& token,
                                  const Identity& caller) {
  if (phase_id.empty()) {
    return absl::InvalidArgumentError(
        "Abort needs the id of the phase to abort (there is no wildcard: the local operator "
        "ends a phase it does not own with stormark-agent --abort-held-phase)");
  }
  mu_.Lock();
  if (state_ == State::kIdle || phase_id != spec_.phase_id()) {
    mu_.Unlock();
    return false;
  }
  if (Status owned = owner_.Check(caller.name, token, "abort", phase_id); !owned.ok()) {
    mu_.Unlock();
    return owned;
  }
  AbortHeldLocked(shut_down_ ? "the agent is shutting down" : "aborted by the controller", -1);
  return true;
}

PhaseRunner::ForcedAbort PhaseRunner::AbortHeldPhase(const std::string& reason) {
  constexpr int64_t kForcedAbortWaitNanos = 30'000'000'000;
  ForcedAbort done;
  {
    mu_.Lock();
    if (state_ == State::kIdle) {
      mu_.Unlock();
      return done;
    }
    done.phase_id = spec_.phase_id();
    done.owner = owner_.identity();
    AbortHeldLocked(reason, kForcedAbortWaitNanos);
  }
  done.stuck_worker = StuckWorker();
  return done;
}

void PhaseRunner::AbortHeldLocked(const std::string& reason, int64_t max_wait_nanos) {
  if (abort_reason_.empty()) abort_reason_ = reason;
  cancelled_ = true;
  state_changed_.NotifyAll();  // An armed Run waiting for its Start.
  // A preparing or running phase notices the flag and leaves that state by itself; a
  // running phase whose caller went away resets to idle by itself too. Once the slot
  // holds another phase (a new generation), this abort has nothing left to do.
  const uint64_t generation = generation_;
  auto settled = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return generation_ != generation ||
           (state_ != State::kPreparing && state_ != State::kRunning && state_ != State::kCleaning);
  };
  if (max_wait_nanos < 0) {
    state_changed_.Wait(mu_, settled);
  } else if (!state_changed_.WaitFor(mu_, max_wait_nanos, settled)) {
    mu_.Unlock();
    return;
  }
  // Freed by the worker if it ever returns (kStuck), or by another call already.
  if (generation_ != generation || state_ == State::kIdle || state_ == State::kStuck) {
    mu_.Unlock();
    return;
  }
  std::unique_ptr<Workload> released = BeginCleanupLocked();
  mu_.Unlock();
  FinishCleanup(std::move(released));
}

StatusOr<CleanupReport> PhaseRunner::Cleanup(const std::string& phase_id, const std::string& token,
                                             const Identity& caller) {
  absl::ReleasableMutexLock lock(&mu_);
  if (state_ == State::kIdle) return CleanupReport();
  if (phase_id != spec_.phase_id()) {
    return absl::FailedPreconditionError(
        common::StrCat("cannot clean up phase '", common::LogSafe(phase_id),
                       "': this agent holds '", spec_.phase_id(), "'"));
  }
  RETURN_IF_ERROR(owner_.Check(caller.name, token, "clean up", phase_id));
  if (state_ == State::kPreparing || state_ == State::kRunning) {
    return absl::FailedPreconditionError(
        common::StrCat("phase '", phase_id, "' is ", StateName(state_), "; Abort it instead"));
  }
  if (state_ == State::kCleaning) {
    // Another call is removing the files already (an Abort): answer when they are gone, so
    // that the caller's next Prepare finds the slot free. Bounded: a removal stuck in the
    // kernel must not hold the call for ever.
    constexpr int64_t kCleaningWaitNanos = 60'000'000'000;
    const uint64_t generation = generation_;
    state_changed_.WaitFor(mu_, kCleaningWaitNanos, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return generation_ != generation || state_ != State::kCleaning;
    });
    return CleanupReport();
  }
  if (state_ == State::kStuck) {
    return absl::UnavailableError(common::StrCat("phase '", phase_id, "' has a worker stuck in ",
                                                 stuck_in_,
                                                 "; its files are removed when it returns"));
  }
  std::unique_ptr<Workload> released = BeginCleanupLocked();
  std::optional<Kept> before;
  if (released != nullptr) before = KeepHandedOverLocked(*released);
  lock.Release();
  if (before) RemoveKept(std::move(before->data));
  return FinishCleanup(std::move(released));
}

void PhaseRunner::Shutdown() {
  constexpr int64_t kShutdownWaitNanos = 10'000'000'000;
  mu_.Lock();
  shut_down_ = true;
  if (kept_) {
    std::unique_ptr<HandedOver> kept = std::move(kept_->data);
    kept_.reset();
    mu_.Unlock();
    RemoveKept(std::move(kept));
    mu_.Lock();
  }
  if (state_ == State::kIdle) {
    mu_.Unlock();
    return;
  }
  AbortHeldLocked("the agent is shutting down", kShutdownWaitNanos);
}

void PhaseRunner::ReleaseStuck() {
  std::unique_ptr<Workload> released;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kStuck) return;
    released = BeginCleanupLocked();
    if (stuck_setup_) {
      // A set-up that got stuck: what it made is only in its own hands.
      released = std::move(stuck_setup_->workload);
      tuning_ = std::move(stuck_setup_->tuning);
      memory_cgroup_ = std::move(stuck_setup_->memory_cgroup);
    }
  }
  FinishCleanup(std::move(released));
}

void PhaseRunner::StopForRuntimeCap(int64_t max_runtime) {
  absl::MutexLock lock(&mu_);
  if (abort_reason_.empty()) {
    abort_reason_ = common::StrCat("stopped after ",
                                   common::FormatDurationNanos(static_cast<double>(max_runtime)),
                                   ": this agent's limits.max_runtime");
  }
  cancelled_ = true;
}

}  // namespace stormark::agent
