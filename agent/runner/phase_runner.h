// The agent's single phase slot: Prepare, Run, Abort and Cleanup of at most one phase at a
// time. This is the guard that makes a second Prepare fail while a phase is held.
//
// States: idle -> preparing -> prepared -> running -> finished -> (Cleanup) cleaning -> idle.
// Abort from any state cancels, removes the phase's files and returns to idle. A run or a
// set-up whose worker does not come back from the kernel after it was stopped (an I/O to a
// dead disk, a lay-out write to a frozen filesystem) ends FAILED (Prepare: ABORTED, naming
// the call) and leaves the slot `stuck`: every Prepare is refused until the thread returns,
// which then removes the phase's files and frees the slot by itself.
//
// The runner also keeps, for the agent's lifetime, what its phases wrote from the start of each
// disposable block and network target (agent/targets/written_prefix.h): a phase that succeeded
// or was aborted adds what it certainly wrote, and a command phase forgets it all.
//
// A phase that hands its data file over to the next one (PhaseSpec.hand_over_to, on a dir
// target: agent/workloads/handed_over.h) leaves it behind at its Cleanup, kept for that phase
// alone; it is removed when any other phase is prepared, when its lease lapses or the reclaim
// time passes (ReclaimKept), and at Shutdown.
//
// A phase whose spec sets heartbeat_timeout_ms is held on a lease: Heartbeat() naming it
// renews the lease, and when the lease runs out the phase is aborted (while running, within
// 20 ms; prepared or finished, at the next ReclaimAbandoned()).
//
// A phase belongs to the identity that prepared it (agent/access/phase_owner.h): Run, Abort,
// Cleanup and Heartbeat of it from another identity, or without the token Prepare returned,
// are PERMISSION_DENIED and change nothing (a foreign heartbeat renews no lease). Only
// AbortHeldPhase, for the local operator, and Shutdown end a phase whoever holds it.
//
// Thread-safe: every method may be called from any gRPC handler thread.
#ifndef STORMARK_AGENT_RUNNER_PHASE_RUNNER_H_
#define STORMARK_AGENT_RUNNER_PHASE_RUNNER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/access/authz.h"
#include "agent/config/config.h"
#include "agent/runner/detached_worker.h"
#include "agent/host/environment.h"
#include "agent/host/page_cache_controls.h"
#include "agent/access/phase_owner.h"
#include "agent/runner/phase_setup.h"
#include "agent/host/tuning.h"
#include "agent/host/sysinfo.h"
#include "agent/host/system_paths.h"
#include "agent/targets/written_prefix.h"
#include "agent/workloads/workload.h"
#include "common/clock.h"
#include "common/monotonic_cond_var.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

class PhaseRunner {
 public:
  // A prepared or finished phase that nobody has touched for this long is abandoned (its
  // controller died between calls): the next Prepare removes it instead of refusing.
  static constexpr int64_t kDefaultReclaimAfterNanos = int64_t{600} * 1'000'000'000;

  // `clock` must outlive the runner.
  PhaseRunner(AgentConfig config, HostFacts host, const common::Clock& clock,
              int64_t reclaim_after_nanos = kDefaultReclaimAfterNanos,
              SystemPaths paths = SystemPaths());
  ~PhaseRunner();  // Aborts and cleans up whatever phase is held.

  PhaseRunner(const PhaseRunner&) = delete;
  PhaseRunner& operator=(const PhaseRunner&) = delete;

  // Polled while waiting or working; returns true when the caller has gone.
  using GoneFn = std::function<bool()>;

  // Validates the spec and runs the workload's untimed set-up. FAILED_PRECONDITION when a
  // phase is already held (unless it was abandoned; see kDefaultReclaimAfterNanos);
  // NOT_FOUND for an unknown target; INVALID_ARGUMENT for bad values. If `gone` reports the
  // caller gone, the set-up stops and its files are removed. A set-up that was told to stop
  // (Abort, `gone`, an expired lease) and is still in the kernel stuck_worker_after later is
  // left behind: ABORTED, naming the call it is stuck in, and the slot is `stuck`.
  // PERMISSION_DENIED when the config's identities rules do not let `caller` prepare this
  // spec. The phase then belongs to `caller`; the reply carries its token.
  common::StatusOr<stormark::v1::PrepareReply> Prepare(const stormark::v1::PhaseSpec& spec,
                                                       const Identity& caller,
                                                       const GoneFn& gone = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Called with progress every interval; returns false when nobody listens any more, which
  // aborts the phase.
  using ProgressFn = std::function<bool(const stormark::v1::RunUpdate::Progress&)>;
  // Called once an armed Run is ready for its Start (its threads wait for the instant);
  // returns false when nobody listens. Not called for a run that ended, or was aborted,
  // before it was ready.
  using ArmedFn = std::function<bool()>;
  // Waits for the start instant, runs the prepared phase and returns its result, which
  // tells success, failure or abort. An error Status means the phase could not start (wrong
  // id, not prepared; PERMISSION_DENIED when `caller` or request.phase_token is not the
  // phase's). Blocks for the whole phase. With request.await_start, the phase is armed:
  // `armed` is called once it is ready, and the instant is the one a Start call gives.
  common::StatusOr<stormark::v1::PhaseResult> Run(const stormark::v1::RunRequest& request,
                                                  const Identity& caller,
                                                  const ProgressFn& progress, const GoneFn& gone,
                                                  const ArmedFn& armed = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Gives the armed Run of `phase_id`, owned by `caller` with `token`, its start instant on
  // this agent's clock. FAILED_PRECONDITION when that phase is not armed and waiting;
  // INVALID_ARGUMENT for an instant more than 60 s ahead.
  common::Status Start(const std::string& phase_id, const std::string& token,
                       const Identity& caller, int64_t start_at_unix_nanos)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Cancels the phase `phase_id` and removes its files, for its owner (`caller` with
  // `token`). Returns whether the phase was held; PERMISSION_DENIED for anyone else, and
  // INVALID_ARGUMENT for an empty id (there is no wildcard). Waits until a running workload
  // has stopped.
  common::StatusOr<bool> Abort(const std::string& phase_id, const std::string& token,
                               const Identity& caller) ABSL_LOCKS_EXCLUDED(mu_);

  // What AbortHeldPhase did.
  struct ForcedAbort {
    std::string phase_id;      // "" when no phase was held.
    std::string owner;         // The identity that prepared it.
    std::string stuck_worker;  // Set when a worker is stuck in the kernel (see StuckWorker).
  };
  // For the local operator: cancels whatever phase is held, whoever prepared it, and removes
  // its files; `reason` goes into the phase's result. Waits at most 30 s for a running
  // workload to stop (it then goes on stopping by itself).
  ForcedAbort AbortHeldPhase(const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);

  // Frees the slot if its phase has been abandoned (prepared or finished, untouched for the
  // reclaim time or past its heartbeat lease) and removes its files. Returns the phase id,
  // or "" if nothing was done.
  std::string ReclaimAbandoned() ABSL_LOCKS_EXCLUDED(mu_);

  // Removes the file a phase handed over when nobody came for it: the writer's lease lapsed
  // with no heartbeat from its identity since (without a lease, the reclaim time passed).
  // Returns a line for the agent's log saying what was removed, or "".
  std::string ReclaimKept() ABSL_LOCKS_EXCLUDED(mu_);

  // Renews the lease of the held phase when `phase_id` names it and `caller` with `token`
  // owns it. Returns the held phase id ("" when idle); PERMISSION_DENIED, renewing nothing,
  // when `phase_id` names the held phase and the caller does not own it. One from the owner
  // without the token (sent before its Prepare's reply arrived) is answered but renews
  // nothing.
  common::StatusOr<std::string> Heartbeat(const std::string& phase_id, const std::string& token,
                                          const Identity& caller) ABSL_LOCKS_EXCLUDED(mu_);

  // What a worker left stuck in the kernel is stuck in ("pread64 on /dev/dm-3 for 40 s"), or
  // "" when no worker is stuck.
  std::string StuckWorker() const ABSL_LOCKS_EXCLUDED(mu_);

  // Removes the files of a prepared or finished phase and frees the slot. OK with 0 when the
  // slot is already empty (Cleanup is idempotent); FAILED_PRECONDITION while running or when
  // a different phase is held; PERMISSION_DENIED when `caller` with `token` does not own it.
  common::StatusOr<CleanupReport> Cleanup(const std::string& phase_id, const std::string& token,
                                          const Identity& caller) ABSL_LOCKS_EXCLUDED(mu_);

  // The id of the phase held, or "" when idle.
  std::string BusyWith() const ABSL_LOCKS_EXCLUDED(mu_);
  // The identity the held phase belongs to, or "" when idle. For the agent's log only.
  std::string HeldBy() const ABSL_LOCKS_EXCLUDED(mu_);

  // Aborts the held phase and refuses every later Prepare. For SIGTERM/SIGINT. Waits at
  // most 10 s for a running workload (an I/O may hang on a dead network device).
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);

  const AgentConfig& config() const { return config_; }
  const SystemPaths& paths() const { return paths_; }
  const HostFacts& host() const { return host_; }

 private:
  enum class State { kIdle, kPreparing, kPrepared, kRunning, kFinished, kCleaning, kStuck };
  struct RunShared;
  static const char* StateName(State state);

  // Marks the slot as cleaning (still busy, so no new phase starts on a disk that is busy
  // deleting) and hands back the workload. The caller then releases mu_ and calls
  // FinishCleanup, since removing a large file can take seconds.
  std::unique_ptr<Workload> BeginCleanupLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes the workload's files, then frees the slot.
  CleanupReport FinishCleanup(std::unique_ptr<Workload> workload) ABSL_LOCKS_EXCLUDED(mu_);
  // Cancels the held phase, waits for it to settle (at most `max_wait_nanos` when not
  // negative) and removes its files. Requires a phase to be held; releases mu_, which the
  // caller took. `reason` is the result's error unless one was set already.
  void AbortHeldLocked(const std::string& reason, int64_t max_wait_nanos) ABSL_UNLOCK_FUNCTION(mu_);
  // BeginCleanupLocked() if the held phase is abandoned, with a note saying so; else nullptr.
  std::unique_ptr<Workload> ReleaseIfAbandonedLocked(std::string* note)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // True when the held phase has a lease and no heartbeat renewed it in time; sets the
  // abort reason.
  bool LeaseExpiredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits for the worker of a set-up to finish, stopping it on an abort, a lost caller or an
  // expired lease. Returns "" when it finished, else what it is stuck in (the worker is then
  // left running).
  std::string AwaitSetup(DetachedWorker& worker, const GoneFn& gone) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits for the worker of a run to finish, stopping it on an abort, a lost caller, an
  // expired lease or stalled I/O. Returns "" when it finished, else what it is stuck in (the
  // worker is then left running, holding `shared`).
  std::string AwaitWorker(DetachedWorker& worker, RunShared& shared, int64_t interval_nanos,
                          const ProgressFn& progress, const GoneFn& gone, bool* caller_gone)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Called by a stuck worker thread when it finally returns: removes the phase's files and
  // frees the slot.
  void ReleaseStuck() ABSL_LOCKS_EXCLUDED(mu_);
  // Cancels the running phase because it ran past limits.max_runtime; its result says so.
  void StopForRuntimeCap(int64_t max_runtime) ABSL_LOCKS_EXCLUDED(mu_);
  // Adds to written_ what `workload`, of phase `phase_id` on target `target`, wrote from the
  // start of the target's device, `identity` (TargetIdentity, as the phase resolved it).
  void RecordWritten(const std::string& target, const std::string& phase_id,
                     const std::string& identity, const Workload& workload);
  // A handed-over file (handed_over.h), for the phase it is kept for.
  struct Kept {
    std::unique_ptr<HandedOver> data;
    std::string to_phase;
    std::string target;
    std::string owner;         // The identity that prepared the writer.
    int64_t lease_nanos = 0;   // The writer's lease; 0: none.
    int64_t renewed_mono = 0;  // Its last heartbeat (or the writer's Cleanup).
  };
  // Keeps what `workload` of the held phase hands over, if the spec asks for it; called by
  // Cleanup once the slot is cleaning. Returns the file kept before, for the caller to remove.
  std::optional<Kept> KeepHandedOverLocked(Workload& workload) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The file kept for the phase `spec` that `caller` prepares, or nullptr; anything kept for
  // another phase is moved to `stale`, for the caller to remove outside the lock.
  std::unique_ptr<HandedOver> TakeKeptLocked(const stormark::v1::PhaseSpec& spec,
                                             const Identity& caller, std::optional<Kept>* stale)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes a handed-over file and its directory (it may take seconds: never under mu_).
  static void RemoveKept(std::unique_ptr<HandedOver> data);
  // Fills the result from the recorders and timings of a finished run.
  void FillResult(const common::Status& status, const common::RecorderSet& recorders,
                  int64_t start_mono, int64_t end_mono, stormark::v1::PhaseResult* result)
      ABSL_LOCKS_EXCLUDED(mu_);

  // What a worker left stuck in the kernel may still use when it returns, which can be after
  // this runner is gone (the agent shutting down): such a worker holds these alive.
  struct Lasting {
    Lasting(AgentConfig config, HostFacts host, SystemPaths paths, const common::Clock& clock);
    const AgentConfig config;
    const HostFacts host;
    const SystemPaths paths;
    const PageCache page_cache;
    std::atomic<bool> cancelled{false};
    WrittenPrefixes written;  // Thread-safe by itself.
  };

  const std::shared_ptr<Lasting> lasting_;
  const AgentConfig& config_ = lasting_->config;
  const HostFacts& host_ = lasting_->host;
  const common::Clock& clock_;
  const int64_t reclaim_after_nanos_;
  const SystemPaths& paths_ = lasting_->paths;
  const PageCache& page_cache_ = lasting_->page_cache;
  WrittenPrefixes& written_ = lasting_->written;

  mutable absl::Mutex mu_;
  common::MonotonicCondVar state_changed_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kIdle;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  stormark::v1::PhaseSpec spec_ ABSL_GUARDED_BY(mu_);
  PhaseOwner owner_ ABSL_GUARDED_BY(mu_);  // Who holds spec_.
  // The pointer; the workload itself is used unlocked while running.
  std::unique_ptr<Workload> workload_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> warnings_ ABSL_GUARDED_BY(mu_);
  stormark::v1::CacheReport cache_report_ ABSL_GUARDED_BY(mu_);  // From Prepare.
  Environment host_environment_ ABSL_GUARDED_BY(mu_);            // From Prepare.
  Environment target_environment_ ABSL_GUARDED_BY(mu_);          // From Prepare.
  std::string target_identity_ ABSL_GUARDED_BY(mu_);             // From Prepare.
  std::unique_ptr<DeviceTuning> tuning_ ABSL_GUARDED_BY(mu_);    // Restored by cleanup.
  // The held phase's memory cgroup, which the agent leaves at cleanup.
  std::unique_ptr<PhaseMemoryCgroup> memory_cgroup_ ABSL_GUARDED_BY(mu_);
  int64_t last_touched_mono_ ABSL_GUARDED_BY(mu_) = 0;                 // End of the last call.
  int64_t last_heartbeat_mono_ ABSL_GUARDED_BY(mu_) = 0;               // The lease's last renewal.
  std::string stuck_in_ ABSL_GUARDED_BY(mu_);                          // Set in kStuck.
  int64_t stuck_since_mono_ ABSL_GUARDED_BY(mu_) = 0;                  // When the worker stopped.
  std::shared_ptr<DetachedWorker> stuck_worker_ ABSL_GUARDED_BY(mu_);  // Set in kStuck.
  std::shared_ptr<PhaseSetup> stuck_setup_ ABSL_GUARDED_BY(mu_);       // A set-up left stuck.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;                       // Counts accepted Prepares.
  // An armed Run waiting for its Start, and the instant the Start gave (0 until then).
  bool awaiting_start_ ABSL_GUARDED_BY(mu_) = false;
  int64_t start_at_unix_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool>& cancelled_ = lasting_->cancelled;
  std::string abort_reason_ ABSL_GUARDED_BY(mu_);  // Why cancelled_ was set.
  std::optional<Kept> kept_ ABSL_GUARDED_BY(mu_);  // A handed-over file, between phases.
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RUNNER_PHASE_RUNNER_H_
