// Everything one `stormark run` produced: the agents, the phases and their outcomes. The
// JSON report and the tables are views of it.
#ifndef STORMARK_CONTROLLER_RUN_RUN_RECORD_H_
#define STORMARK_CONTROLLER_RUN_RUN_RECORD_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

#include "controller/fleet/clock_sync.h"
#include "controller/fleet/fleet.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

struct AgentRecord {
  std::string host;
  // Why the agent took no part, or empty.
  std::string error;
  stormark::v1::AgentInfo info;
  ClockEstimate clock;
  // The plan's labels for this host ({transport: aoe}).
  std::vector<std::pair<std::string, std::string>> labels;
};

// One line of a plan's setup or teardown, run on every usable host at a sweep point.
struct HookOutcome {
  // How many of the run's phases came before it: where it goes among them.
  size_t before_phase = 0;
  std::string what;   // "setup" or "teardown"
  std::string line;   // the shell line, with the point's values in it
  std::string point;  // DescribeSweepPoint of its point, "" outside a sweep
  // "interrupt" or "stop" (--fail-fast) for a teardown that ran after one, bounded in time;
  // "" otherwise.
  std::string after;
  size_t hosts = 0;           // hosts it ran on
  int64_t longest_nanos = 0;  // the longest run of it on a host that succeeded
  // Each host it failed on, and why (the first and last lines of its stderr).
  std::vector<std::pair<std::string, std::string>> failures;

  bool ok() const { return failures.empty(); }
};

// A sweep point whose setup failed: none of its phases ran.
struct SkippedPoint {
  size_t before_phase = 0;
  std::string point;  // DescribeSweepPoint
};

struct RunRecord {
  std::string run_id;
  int64_t started_unix_nanos = 0;
  int64_t finished_unix_nanos = 0;
  std::vector<AgentRecord> agents;
  std::vector<PhaseOutcome> phases;
  // The setup and teardown lines, in the order they ran.
  std::vector<HookOutcome> hooks;
  std::vector<SkippedPoint> skipped_points;
  // True when the user interrupted the run.
  bool interrupted = false;
  // Why --fail-fast stopped the run, or "".
  std::string stopped;
  // Reads a phase's stored results back by host index, for the hosts whose results were
  // trimmed (HostOutcome::result_trimmed, full_phase.h), their series packed into the second
  // argument by host index (fleet/packed_series.h); null when none can be.
  std::function<common::StatusOr<std::vector<std::optional<stormark::v1::PhaseResult>>>(
      size_t, std::vector<std::string>*)>
      read_back;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_RUN_RECORD_H_
