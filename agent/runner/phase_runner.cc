#include "agent/runner/phase_runner.h"

#include "agent/runner/phase_setup.h"
#include "agent/runner/thread_top.h"
#include "agent/runner/worker_watch.h"
#include "agent/workloads/workload_registry.h"
#include "common/log_text.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "fmt/format.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using stormark::v1::PhaseResult;

// How often a set-up's wait looks for a caller that has gone.
constexpr int64_t kPollNanos = 20'000'000;

double Seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

}  // namespace

PhaseRunner::Lasting::Lasting(AgentConfig config, HostFacts host, SystemPaths paths,
                              const common::Clock& clock)
    : config(std::move(config)),
      host(std::move(host)),
      paths(std::move(paths)),
      page_cache(clock, this->paths.drop_caches) {}

PhaseRunner::PhaseRunner(AgentConfig config, HostFacts host, const common::Clock& clock,
                         int64_t reclaim_after_nanos, SystemPaths paths)
    : lasting_(
          std::make_shared<Lasting>(std::move(config), std::move(host), std::move(paths), clock)),
      clock_(clock),
      reclaim_after_nanos_(reclaim_after_nanos) {}

PhaseRunner::~PhaseRunner() {
  Shutdown();
  std::shared_ptr<DetachedWorker> stuck;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kStuck) return;
    stuck = stuck_worker_;
  }
  // It must not call back into this runner from now on; a call already under way (which
  // takes mu_ and removes the phase's files) is waited for.
  if (stuck) stuck->Disown();
  absl::MutexLock lock(&mu_);
  if (state_ != State::kStuck) return;
  // The stuck thread may still return and use its workload: leave it to the process's end.
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
  absl::MutexLock lock(&mu_);
  return state_ == State::kIdle ? "" : spec_.phase_id();
}

std::string PhaseRunner::HeldBy() const {
  absl::MutexLock lock(&mu_);
  return state_ == State::kIdle ? "" : owner_.identity();
}

StatusOr<stormark::v1::PrepareReply> PhaseRunner::Prepare(const stormark::v1::PhaseSpec& spec,
                                                          const Identity& caller,
                                                          const GoneFn& gone) {
  // The id is held, reported to other callers (BusyWith) and named in messages: checked first.
  RETURN_IF_ERROR(common::CheckName("phase id", spec.phase_id()));
  if (spec.series_interval_ms() != 0 && spec.series_interval_ms() < common::kMinSeriesIntervalMs) {
    return absl::InvalidArgumentError(common::StrCat("series_interval_ms ",
                                                     spec.series_interval_ms(), " is under ",
                                                     common::kMinSeriesIntervalMs, " ms"));
  }
  ASSIGN_OR_RETURN(std::string token, NewPhaseToken());
  std::vector<std::string> warnings;
  std::unique_ptr<Workload> abandoned;
  std::string note;
  std::unique_ptr<HandedOver> handed;
  std::optional<Kept> stale;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return absl::UnavailableError("agent is shutting down");
    abandoned = ReleaseIfAbandonedLocked(&note);
  }
  if (abandoned) {
    FinishCleanup(std::move(abandoned));
    warnings.push_back(note);
  }
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return absl::UnavailableError("agent is shutting down");
    if (state_ == State::kStuck) {
      return absl::UnavailableError(fmt::format(
          "a worker of phase '{}' is stuck in the kernel ({} for {:.0f} s): this agent takes no "
          "new phase until that I/O returns (is the device or its network gone? restart the "
          "agent once it is back, or reboot)",
          spec_.phase_id(), stuck_in_, Seconds(clock_.MonotonicNanos() - stuck_since_mono_)));
    }
    if (state_ != State::kIdle) {
      return absl::FailedPreconditionError(
          common::StrCat("agent is busy with phase '", spec_.phase_id(), "' (", StateName(state_),
                         "); an agent runs one phase at a time: wait for it, or Abort it"));
    }
    state_ = State::kPreparing;
    spec_ = spec;
    owner_ = PhaseOwner(caller.name, token);
    cancelled_ = false;
    abort_reason_.clear();
    last_heartbeat_mono_ = clock_.MonotonicNanos();
    ++generation_;
    handed = TakeKeptLocked(spec, caller, &stale);
  }
  // A file kept for another phase is not this one's to read, nor to leave on the disk.
  if (stale) RemoveKept(std::move(stale->data));

  // A command or hook may discard, recreate or reformat any device: what the agent wrote
  // before is no longer certain anywhere.
  if (ProgramOf(spec) != nullptr) written_.ForgetAll();

  // The set-up runs on a worker of its own, which is left behind if it gets stuck in the
  // kernel (a lay-out write to a frozen or dead filesystem): this call then answers anyway.
  auto setup = std::make_shared<PhaseSetup>();
  setup->handed = std::move(handed);
  const std::string what = common::StrCat(common::WorkloadName(spec), " set-up");
  auto worker = DetachedWorker::Start(
      [lasting = lasting_, setup, spec, caller, what] {
        return CatchAtThreadTop(what, [&] {
          return SetUpPhase(spec, caller, lasting->config, lasting->host, lasting->paths,
                            lasting->page_cache, lasting->written, lasting->cancelled, setup.get());
        });
      },
      [this] { ReleaseStuck(); });
  if (const std::string stuck_in = AwaitSetup(*worker, gone); !stuck_in.empty()) {
    absl::ReleasableMutexLock lock(&mu_);
    state_ = State::kStuck;
    stuck_in_ = stuck_in.substr(0, stuck_in.rfind(" for "));
    stuck_since_mono_ = clock_.MonotonicNanos();
    stuck_worker_ = worker;
    stuck_setup_ = setup;
    state_changed_.NotifyAll();
    Status stuck = absl::AbortedError(fmt::format(
        "worker stuck in the kernel in {} while preparing phase '{}'; the I/O may never return "
        "(stopped because: {}). This agent takes no new phase until it does",
        stuck_in, spec.phase_id(),
        abort_reason_.empty() ? "the phase was aborted" : abort_reason_));
    lock.Release();
    // The worker may have returned before the slot was marked stuck; then free it here.
    if (worker->done()) ReleaseStuck();
    return stuck;
  }
  Status status = worker->status();
  RemoveKept(std::move(setup->handed));  // Handed over, and not read by this workload.
  if (status.ok()) {
    RecordWritten(spec.target(), spec.phase_id(), setup->target_identity, *setup->workload);
  }

  absl::ReleasableMutexLock lock(&mu_);
  if (status.ok() && cancelled_) status = absl::CancelledError("phase aborted while preparing");
  if (!status.ok()) {
    BeginCleanupLocked();
    lock.Release();
    FinishCleanup(std::move(setup->workload));
    setup->tuning.reset();         // Restores the device's settings.
    setup->memory_cgroup.reset();  // Leaves the phase's memory cgroup.
    return status;
  }
  warnings.insert(warnings.end(), setup->warnings.begin(), setup->warnings.end());
  workload_ = std::move(setup->workload);
  tuning_ = std::move(setup->tuning);
  memory_cgroup_ = std::move(setup->memory_cgroup);
  warnings_ = warnings;
  cache_report_ = setup->cache_report;
  host_environment_ = std::move(setup->host_environment);
  target_environment_ = std::move(setup->target_environment);
  target_identity_ = setup->target_identity;
  state_ = State::kPrepared;
  last_touched_mono_ = clock_.MonotonicNanos();
  // The owner is answering this call, and from now on its heartbeats carry the token: one
  // it sent before the reply arrived renews nothing, so the lease starts afresh here.
  last_heartbeat_mono_ = last_touched_mono_;
  owner_.Issue();
  state_changed_.NotifyAll();

  stormark::v1::PrepareReply reply;
  reply.set_prepared_unix_nanos(clock_.NowUnixNanos());
  reply.set_phase_token(owner_.token());
  for (const auto& w : warnings) reply.add_warnings(w);
  return reply;
}

std::string PhaseRunner::AwaitSetup(DetachedWorker& worker, const GoneFn& gone) {
  WorkerWatch watch(clock_.MonotonicNanos(), config_.stalled_io_after_nanos,
                    config_.stuck_worker_after_nanos, paths_.proc_self);
  while (!worker.WaitFor(kPollNanos)) {
    if (!cancelled_) {
      absl::MutexLock lock(&mu_);
      if (LeaseExpiredLocked()) cancelled_ = true;
    }
    if (!cancelled_ && gone && gone()) cancelled_ = true;
    if (!cancelled_) continue;
    // Told to stop long ago and not back: stuck if a thread is in the kernel for good.
    if (std::string stuck = watch.Stuck(clock_.MonotonicNanos()); !stuck.empty()) {
      if (worker.Abandon()) return stuck;
    }
  }
  return "";
}

void PhaseRunner::RecordWritten(const std::string& target, const std::string& phase_id,
                                const std::string& identity, const Workload& workload) {
  const TargetConfig* config = config_.FindTarget(target);
  if (config == nullptr) return;
  WrittenPrefix written = workload.WrittenFromStart();
  written.phase_id = phase_id;
  written_.Record(*config, identity, written);
}

}  // namespace stormark::agent
