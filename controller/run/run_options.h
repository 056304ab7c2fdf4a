// `stormark run`'s options (the flags main.cc declares), and what they do before a run: the
// workload flags and --set change the plan's phases, the heartbeat and deadline flags the
// fleet's options.
#ifndef STORMARK_CONTROLLER_RUN_RUN_OPTIONS_H_
#define STORMARK_CONTROLLER_RUN_RUN_OPTIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tls.h"
#include "controller/fleet/fleet.h"
#include "controller/plan/plan.h"

namespace stormark::controller {

struct RunOptions {
  // --agent HOST:PORT, repeatable. Empty: the plan's agents, else an embedded local agent.
  std::vector<std::string> agents;
  // --agents-dns NAME:PORT and --inventory FILE: more agents (controller/fleet/discovery.h). Any of
  // --agent, --agents-dns and --inventory replaces the plan's hosts.
  std::string agents_dns;
  std::string inventory;
  // --plan FILE.
  std::string plan_path;
  // Workload flags. Without --plan they describe the single phase to run; with --plan,
  // size/bs/direct/fdatasync/target override every phase, and rw is refused.
  std::optional<std::string> rw, size, bs, target;
  std::optional<bool> direct, fdatasync;
  // --workload stream|bonnie: the single phase to run without --plan.
  std::optional<std::string> workload;
  // --postmark-config FILE: a PostMark script; without --plan, its runs are the phases (the
  // workload is postmark). --set parameters override the script's.
  std::string postmark_config;
  // --fio FILE: a fio job file; without --plan, its run groups are the phases
  // (controller/fio/fio_import.h). --section NAME: only those jobs.
  std::string fio_path;
  std::vector<std::string> fio_sections;
  // --set KEY=VALUE, repeatable: a workload parameter for every phase.
  std::vector<std::string> sets;
  // --mode concurrent|sequential; unset means the plan's (default concurrent).
  std::optional<std::string> mode;
  // --cache keep|sync|drop, for every phase.
  std::optional<std::string> cache;
  // --csv FILE: bonnie++ CSV lines of the bonnie phases.
  std::string csv_path;
  // --json FILE.
  std::string json_path;
  // --fio-json FILE / --fio-json-plus FILE: the run in fio's JSON (json+) layout
  // (controller/fio/fio_json.h).
  std::string fio_json_path;
  std::string fio_json_plus_path;
  // --db PATH: the results database; empty means DefaultResultsPath(). --no-db: none.
  std::string db_path;
  bool no_db = false;
  // --label TEXT: the run's name in `stormark results list`; default the plan file's name,
  // else the phases' names.
  std::string label;
  // --baseline HOST: after the phases, the comparison table against this host's figures.
  std::string baseline;
  // --all-hosts: a table row per host however many; --group-by: how a phase of more hosts
  // than that groups them (host_groups.h).
  bool all_hosts = false;
  std::string group_by;
  // --dir PATH: the directory the embedded agent benchmarks.
  std::string dir;
  // --progress / --no-progress; unset means "when stdout is a terminal".
  std::optional<bool> progress;
  // --fail-fast: the first host failure stops the run.
  bool fail_fast = false;
  // --heartbeat-interval and --heartbeat-timeout (durations); unset means the plan's, else
  // 2 s and 10 s.
  std::optional<std::string> heartbeat_interval, heartbeat_timeout;
  // --deadline: abort a phase still running this long after its start on a host, for every
  // phase (overrides the plan's).
  std::optional<std::string> deadline;
  // --prepare-deadline: fail a phase on a host whose Prepare has not finished this long after
  // it began, for every phase (overrides the plan's).
  std::optional<std::string> prepare_deadline;
  // --tls-ca, --tls-cert, --tls-key (or --tls-dir): mutual TLS to every agent; each
  // overrides the plan's `tls`.
  common::TlsFiles tls;
  // The agent binary the embedded default starts.
  std::string agent_binary;
};

// Applies the workload flags (--workload, --postmark-config, --rw, --size, --bs, --direct,
// --fdatasync, --set, --target, --cache) to the plan, then checks every phase and every sweep
// point. INVALID_ARGUMENT names the flag that cannot apply; `plan` may be partly changed then.
common::Status ApplyFlags(const RunOptions& options, Plan* plan);

// The fleet's options: the plan's heartbeat and deadlines, overridden by the flags (--deadline
// and --prepare-deadline are written into every phase of `plan`). INVALID_ARGUMENT names a
// bad flag.
common::StatusOr<FleetOptions> MakeFleetOptions(const RunOptions& options, Plan* plan);

// How `stormark results list` names a run: --label, else the plan file, else the phases.
std::string RunLabel(const RunOptions& options, const Plan& plan);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_RUN_OPTIONS_H_
