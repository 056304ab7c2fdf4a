// The Workload seam: what is done to a target. Each workload has an untimed Prepare and a
// timed, cancellable Run; Cleanup removes what both created.
#ifndef STORMARK_AGENT_WORKLOADS_WORKLOAD_H_
#define STORMARK_AGENT_WORKLOADS_WORKLOAD_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "agent/dir/dir.h"
#include "agent/targets/written_prefix.h"
#include "agent/workloads/handed_over.h"
#include "agent/workloads/start_gate.h"
#include "agent/workloads/timed_region.h"
#include "common/clock.h"
#include "common/recorder.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// What Run gets from the phase runner.
struct RunContext {
  const common::Clock& clock;
  // Set when the phase is aborted; Run checks it between operations and returns CANCELLED.
  const std::atomic<bool>& cancelled;
  // One recorder per worker thread, all started at the phase's start instant.
  common::RecorderSet& recorders;
  // The timed region, open when Run is called; see timed_region.h.
  TimedRegion& region;
  // For a workload that StartsItself(): the common instant it waits for, once its threads
  // are ready, before its first I/O. nullptr when the region is open already.
  StartGate* start = nullptr;
};

class Workload {
 public:
  virtual ~Workload() = default;

  // Validates parameters against the target and does the untimed set-up, which may be long
  // (laying out files): it returns CANCELLED soon after `cancelled` is set. Appends honest
  // remarks about the coming measurement (cache, tmpfs, ...) to `warnings`.
  virtual common::Status Prepare(const std::atomic<bool>& cancelled,
                                 std::vector<std::string>* warnings) = 0;

  // The timed region: returns when the work is done, fails, or `ctx.cancelled` is set.
  // Called at most once, after a successful Prepare, from one thread.
  virtual common::Status Run(RunContext& ctx) = 0;

  // True for a workload whose Run is called before the start instant, to make its threads
  // ready, and which calls ctx.start->AwaitStart() before its first I/O (returning
  // CANCELLED, with none, when that is false). Run of any other workload is called at the
  // instant, its region open. At a thousand agents on one machine, threads started at the
  // instant are what makes the last agent's start late.
  virtual bool StartsItself() const { return false; }

  // Removes every file Prepare and Run created, through the phase's Dir; says what it removed
  // and what it could not remove, and why. Idempotent.
  virtual CleanupReport Cleanup() = 0;

  // Adds what the recorders' totals do not hold (per-test measurements, parameters the
  // workload resolved, its own warnings) to the result. Called once, after Run returned.
  virtual void AddToResult(stormark::v1::PhaseResult* result) const {}

  // The prefix [0, bytes) of the target's device that this phase has certainly written so
  // far, in requests that completed (its layout, its timed writes), and the device's size;
  // {} when it wrote none, or only its own files. The phase id is left empty. Called after
  // Prepare or Run returned, whatever their status (see agent/targets/written_prefix.h).
  virtual WrittenPrefix WrittenFromStart() const { return {}; }

  // The data file a successful Run wrote in full, for the next phase to read
  // (agent/workloads/handed_over.h), moved out of this workload so that its Cleanup no longer
  // removes it; nullptr when it has none to give (the default). Called once, after Run.
  virtual std::unique_ptr<HandedOver> HandOver() { return nullptr; }
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_WORKLOAD_H_
