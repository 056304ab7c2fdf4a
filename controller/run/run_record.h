// Everything one `stormark run` produced: the agents, the phases and their outcomes. The
// JSON report and the tables are views of it.
#ifndef STORMARK_CONTROLLER_RUN_RUN_RECORD_H_
#define STORMARK_CONTROLLER_RUN_RUN_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

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

struct RunRecord {
  std::string run_id;
  int64_t started_unix_nanos = 0;
  int64_t finished_unix_nanos = 0;
  std::vector<AgentRecord> agents;
  std::vector<PhaseOutcome> phases;
  // True when the user interrupted the run.
  bool interrupted = false;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_RUN_RECORD_H_
