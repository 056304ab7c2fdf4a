// The agents of one run, driven together: connect and clock sync, then each phase with a
// prepare barrier, one common start instant, progress, results and cleanup.
//
// A host that fails (unreachable, refused, died mid-phase, silent past the heartbeat
// timeout, overdue past its phase deadline or its prepare deadline) becomes a row with its reason;
// the others go on, unless fail_fast is set: then the first failure stops the run, and the phase in
// flight is aborted on every other host. Thread-safe only where noted.
#ifndef STORMARK_CONTROLLER_FLEET_FLEET_H_
#define STORMARK_CONTROLLER_FLEET_FLEET_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/clock.h"
#include "common/monotonic_cond_var.h"
#include "common/status.h"
#include "controller/fleet/agent_client.h"
#include "controller/fleet/heartbeat_monitor.h"
#include "controller/fleet/phase_deadline.h"
#include "controller/fleet/timer_heap.h"
#include "controller/plan/plan.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// One host's part of one phase.
// What a host did within [from, to] on the controller's clock, measured from its interval series:
// the window in which every host of its phase ran (report/validity.h). Kept on the host when the
// series itself left memory once stored (run/full_phase.h).
struct WindowShare {
  int64_t from = 0, to = 0;
  uint64_t bytes = 0, ops = 0;
};

struct HostOutcome {
  std::string host;
  std::string target;
  // Why the host has no usable result: a controller-side failure, or the agent's own error
  // line for a failed or aborted phase. Empty on success.
  std::string error;
  // The agent's result, when it sent one (also for FAILED and ABORTED phases).
  std::optional<stormark::v1::PhaseResult> result;
  // The clock estimate in force for this phase.
  ClockEstimate clock;
  // How the row's storage is reached, as the tables label it ("local", "AoE"): the plan's
  // `transport` label of the host, else what the agent detected; and a note when the two
  // disagree. Set by LabelTransports (environment.h), empty until then.
  std::string transport;
  std::string transport_note;
  // Part of `result` was dropped from memory once the results database held it: its interval
  // series as it arrived, all but its summary after its phase's table (run/full_phase.h, which
  // reads it back).
  bool result_trimmed = false;
  // The result's series, serialized (packed_series.h), from its arrival until a host_done
  // takes them; empty otherwise.
  std::string packed_series;
  // How many samples the result's own series had when they left it (packed, or dropped once
  // stored), and what the host did while all hosts ran, measured from the stored series at
  // the phase's end (ShareWindow, report/validity.h).
  int own_series_samples = 0;
  std::optional<WindowShare> window_share;

  bool succeeded() const {
    return result && result->state() == stormark::v1::PhaseResult::SUCCEEDED;
  }
};

struct PhaseOutcome {
  PhasePlan plan;
  std::string phase_id;
  RunMode mode = RunMode::kConcurrent;
  // The common start instant on the controller's clock.
  int64_t start_at_unix_nanos = 0;
  // How far ahead of the moment it was chosen the start instant was set (the lead: fan-out,
  // round trips, lateness learned from earlier phases). 0 when no host was prepared. For a
  // sequential phase, the first host's.
  int64_t start_lead_nanos = 0;
  std::vector<HostOutcome> hosts;
  // Spread of the actual starts across hosts, on the controller's clock, and how far that
  // figure can be off because of the clock estimates. Unset when no host started.
  std::optional<int64_t> start_skew_nanos;
  int64_t start_skew_uncertainty_nanos = 0;
  // False for a phase read back from the results database before it had ended (its controller
  // stopped during it, or it is still running): its hosts are those whose results had come.
  bool ended = true;
};

struct FleetOptions {
  HeartbeatOptions heartbeat;
  // The first host failure stops the run (--fail-fast).
  bool fail_fast = false;
  // A host whose agent has not armed a Run this long after it was opened is given up.
  int64_t arm_deadline_nanos = 30'000'000'000;
};

class Fleet {
 public:
  // Called from gRPC's threads with (host index, progress). Must be thread-safe and quick.
  using ProgressFn = std::function<void(size_t, const stormark::v1::RunUpdate::Progress&)>;

  Fleet(std::vector<std::unique_ptr<AgentClient>> clients, const common::Clock& clock,
        FleetOptions options = FleetOptions());
  ~Fleet();

  // Connects to every agent and estimates its clock, all in parallel, then watches the
  // reachable ones with heartbeats until the fleet is destroyed. Returns one status per
  // host, in order; hosts that failed take no part in phases (their rows carry the error).
  std::vector<common::Status> ConnectAll();

  size_t size() const { return clients_.size(); }
  const AgentClient& client(size_t i) const { return *clients_[i]; }
  // Empty when host i is usable, else why not. Thread-safe.
  std::string host_error(size_t i) const ABSL_LOCKS_EXCLUDED(mu_);

  // Runs one phase on every usable host, all at one instant or one host after another, and
  // returns every host's outcome. Start skew is measured for concurrent runs only.
  // `host_done` (when set) is called once for each host that was prepared (whether it then
  // ran, or was stopped before it began), from gRPC's threads, as soon as its result and
  // cleanup are in: its outcome is final then but for its clock, which is set once every
  // host has ended. It may drop from the result what the fleet no longer reads (everything
  // but the fields of start_unix_nanos and start_late_nanos), while it owns the host. The
  // result's series come packed (HostOutcome::packed_series): what host_done leaves packed is
  // put back into the result when it returns. Must be thread-safe and quick.
  using HostDoneFn = std::function<void(size_t, HostOutcome*)>;
  PhaseOutcome RunPhase(const PhasePlan& plan, const std::string& phase_id,
                        const ProgressFn& progress, RunMode mode = RunMode::kConcurrent,
                        const HostDoneFn& host_done = nullptr);

  // Aborts the phase in flight on every host and makes later RunPhase calls return at once.
  // Thread-safe; meant for SIGINT.
  void AbortAll() ABSL_LOCKS_EXCLUDED(mu_);
  bool aborted() const { return aborted_; }

  // With fail_fast: why the run was stopped ("--fail-fast: host db1 failed: ..."), or "".
  // Thread-safe.
  std::string stopped() const ABSL_LOCKS_EXCLUDED(mu_);
  // Interrupted, or stopped by --fail-fast: no more phases should start.
  bool halted() const { return aborted_ || stopped_; }

 private:
  // What the watchdog knows of one host's phase in flight.
  struct Running {
    bool active = false;
    std::string phase_id;
    int64_t start_at = 0;  // Controller clock, ns since the epoch.
    std::optional<PhaseDeadline> deadline;
    std::string overdue;  // Set once a deadline passed and the phase was aborted.
    // While the host prepares the phase (before the start barrier): since when, on the
    // controller clock, and for how long at most.
    bool preparing = false;
    std::string phase_name;
    int64_t prepare_started = 0;
    std::optional<PrepareDeadline> prepare_deadline;
    // While an armed Run has been opened and the agent has not said it is armed: since when,
    // on the controller clock (0 otherwise).
    int64_t arm_started = 0;
  };

  // Prepare barrier, clock sync, common start, run and cleanup for the hosts in `group`. The
  // calling thread starts every host's calls and waits; the calls' callbacks (on gRPC's threads)
  // carry each host on to its next step, so no thread is held per host.
  void RunGroup(const std::vector<size_t>& group, const ProgressFn& progress,
                const HostDoneFn& host_done, PhaseOutcome* outcome);
  // Prepare, with the host's phase in flight, or the reason it cannot take part; done(prepared).
  void PrepareHost(size_t i, const PhasePlan& plan, const std::string& phase_id, HostOutcome* host,
                   std::function<void(bool)> done);
  // The run and cleanup of one prepared host; sets host->result or host->error. With a
  // `start_at` of 0 the run is armed (an agent that arms_runs): on_armed(true) once the agent
  // waits for its Start, on_armed(false) if the run ended before; StartHost then starts it.
  // With `pack_series` (a host_done will take the result), the result's series are packed as
  // it arrives (HostOutcome::packed_series).
  void RunHost(size_t i, const PhasePlan& plan, const std::string& phase_id, int64_t start_at,
               const ProgressFn& progress, HostOutcome* host, std::function<void(bool)> on_armed,
               std::function<void()> done, bool pack_series);
  // Sends an armed host its start instant; done() when the call is over. A host that cannot
  // be started is aborted, and its result says why.
  void StartHost(size_t i, const std::string& phase_id, int64_t start_at,
                 std::function<void()> done) ABSL_LOCKS_EXCLUDED(mu_);
  // A Run stream ended: the host's result or error, our own reasons first.
  void Finished(size_t i, common::StatusOr<stormark::v1::PhaseResult> result, HostOutcome* host,
                bool pack_series);
  // Removes the phase's files on host i, unless it is lost (its agent does that itself).
  void CleanUpHost(size_t i, const PhasePlan& plan, const std::string& phase_id, HostOutcome* host,
                   std::function<void()> done);
  // A host failed: with fail_fast, stops the run and aborts the phase on the others.
  void HostFailed(size_t i, const std::string& error) ABSL_LOCKS_EXCLUDED(mu_);
  // From the heartbeat monitor's thread: a host stopped answering; or a round passed.
  void HostLost(size_t i, const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  // From the monitor's thread every round: aborts the hosts whose deadline timer is due and
  // past its limit.
  void CheckDeadlines() ABSL_LOCKS_EXCLUDED(mu_);
  // When host i's phase or prepare is past its limit, as far as is known now; nullopt when it
  // has none (no phase in flight, already overdue, a size-bound phase with no estimate yet).
  std::optional<int64_t> DueAt(const Running& r) const;
  // Sets host i's deadline timer from running_[i]; called whenever that changes.
  void ScheduleDeadline(size_t i) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Aborts `phase_id` on host i without waiting; JoinBackground waits for every such abort.
  void AbortInBackground(size_t i, const std::string& phase_id) ABSL_LOCKS_EXCLUDED(mu_);
  void JoinBackground() ABSL_LOCKS_EXCLUDED(mu_);
  // Clock syncs of `rounds` exchanges with each of `hosts`, a few hosts at a time, a second
  // one for each host whose round trip stood out, then synced(host, status) for each.
  void SyncClocks(const std::vector<size_t>& hosts, int rounds,
                  const std::function<void(size_t, const common::Status&)>& synced);
  static void MeasureStartSkew(PhaseOutcome* outcome);

  std::vector<std::unique_ptr<AgentClient>> clients_;
  const common::Clock& clock_;
  const FleetOptions options_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> stopped_{false};
  // Extra lead before the start instant, learned from the starts of earlier phases whose
  // message (a Start, or an older agent's Run) came after the instant.
  int64_t learned_lead_nanos_ = 0;

  mutable absl::Mutex mu_;
  std::vector<std::string> host_errors_ ABSL_GUARDED_BY(mu_);
  std::vector<Running> running_ ABSL_GUARDED_BY(mu_);
  // Each host's next deadline (prepare, arm or phase) on the controller clock.
  TimerHeap deadlines_ ABSL_GUARDED_BY(mu_);
  // How long after the instant the latest Start of the group in flight reached its agent.
  int64_t late_start_message_nanos_ ABSL_GUARDED_BY(mu_) = 0;
  std::string current_phase_ ABSL_GUARDED_BY(mu_);
  std::string stop_reason_ ABSL_GUARDED_BY(mu_);
  size_t background_ ABSL_GUARDED_BY(mu_) = 0;  // Aborts in flight.
  common::MonotonicCondVar background_done_;    // Signalled as each ends.

  // Last, so that it stops before the rest goes.
  std::unique_ptr<HeartbeatMonitor> monitor_;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_FLEET_H_
