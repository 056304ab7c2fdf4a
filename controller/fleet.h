// The agents of one run, driven together: connect and clock sync, then each phase with a
// prepare barrier, one common start instant, progress, results and cleanup.
//
// A host that fails (unreachable, refused, died mid-phase) becomes a row with its reason;
// the others go on. Thread-safe only where noted.
#ifndef STORMARK_CONTROLLER_FLEET_H_
#define STORMARK_CONTROLLER_FLEET_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "controller/agent_client.h"
#include "controller/plan.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// One host's part of one phase.
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
  std::vector<HostOutcome> hosts;
  // Spread of the actual starts across hosts, on the controller's clock, and how far that
  // figure can be off because of the clock estimates. Unset when no host started.
  std::optional<int64_t> start_skew_nanos;
  int64_t start_skew_uncertainty_nanos = 0;
};

class Fleet {
 public:
  // Called from the Run threads with (host index, progress). Must be thread-safe.
  using ProgressFn =
      std::function<void(size_t, const stormark::v1::RunUpdate::Progress&)>;

  Fleet(std::vector<std::unique_ptr<AgentClient>> clients, const common::Clock& clock);

  // Connects to every agent and estimates its clock, all in parallel. Returns one status per
  // host, in order; hosts that failed take no part in phases (their rows carry the error).
  std::vector<common::Status> ConnectAll();

  size_t size() const { return clients_.size(); }
  const AgentClient& client(size_t i) const { return *clients_[i]; }
  // Empty when host i is usable, else why not.
  const std::string& host_error(size_t i) const { return host_errors_[i]; }

  // Runs one phase on every usable host, all at one instant or one host after another, and
  // returns every host's outcome. Start skew is measured for concurrent runs only.
  PhaseOutcome RunPhase(const PhasePlan& plan, const std::string& phase_id,
                        const ProgressFn& progress, RunMode mode = RunMode::kConcurrent);

  // Aborts the phase in flight on every host and makes later RunPhase calls return at once.
  // Thread-safe; meant for SIGINT.
  void AbortAll();
  bool aborted() const { return aborted_; }

 private:
  // Prepare barrier, common start, run and cleanup for the hosts in `group`.
  void RunGroup(const std::vector<size_t>& group, const ProgressFn& progress,
                PhaseOutcome* outcome);
  static void MeasureStartSkew(PhaseOutcome* outcome);

  std::vector<std::unique_ptr<AgentClient>> clients_;
  std::vector<std::string> host_errors_;
  const common::Clock& clock_;
  std::atomic<bool> aborted_{false};
  std::mutex phase_mu_;
  std::string current_phase_;  // Guarded by phase_mu_.
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_H_
