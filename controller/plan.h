// What to run: the phases, in order, and optionally the agents. Comes from a small YAML plan
// file or from command-line flags, and is validated completely before anything runs.
//
//   agents: [ "db1:7420", "db2:7420" ]   # optional; --agent replaces it
//   target: scratch                      # optional default target for every phase
//   mode: concurrent                     # or sequential: one host at a time
//   phases:
//     - name: seq-write
//       workload: stream
//       rw: write
//       size: 1G
//       bs: 1M
//       fdatasync: true
//     - name: bonnie
//       workload: bonnie                 # parameters: controller/workloads/bonnie_params.h
//       files: 16:0:0:1
//     - name: pm
//       workload: postmark               # parameters: controller/workloads/postmark_params.h
//       config: pm.cfg                   # a PostMark script, relative to this plan; one
//       transactions: 1000               # phase per `run` in it (pm-1, pm-2, ...); the
//                                        # phase's own parameters override the script's
#ifndef STORMARK_CONTROLLER_PLAN_H_
#define STORMARK_CONTROLLER_PLAN_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

struct PhasePlan {
  // Shown in tables; [A-Za-z0-9._-].
  std::string name;
  // An agent target name; empty means "the agent's only target".
  std::string target;
  // The workload; phase_id and target are filled in per run and host.
  stormark::v1::PhaseSpec spec;

  // "stream write 1 GiB, bs 1 MiB, fdatasync".
  std::string Describe() const;
};

// How the hosts take part in each phase.
enum class RunMode {
  // All hosts at one instant: the comparison under shared load, and the aggregate.
  kConcurrent,
  // One host after another, so hosts sharing an array or a network don't disturb each
  // other's figures.
  kSequential,
};

// "concurrent"/"sequential"; INVALID_ARGUMENT otherwise.
common::StatusOr<RunMode> ParseRunMode(std::string_view text);

struct Plan {
  std::vector<std::string> agents;
  RunMode mode = RunMode::kConcurrent;
  std::vector<PhasePlan> phases;
  // Remarks about input that was accepted but not acted on (a PostMark script's `show`), for
  // the user to read before the run: "pm.cfg:7: 'show' ignored: ...".
  std::vector<std::string> notes;
};

// The plan `stormark run` uses when given none: write 1 GiB with fdatasync, then read it
// back from outside the page cache, in 1 MiB blocks.
Plan DefaultPlan();

// Parses and validates a plan. Errors read "plan.yaml:7: phase 'w': bad size '10X': ...".
common::StatusOr<Plan> ParsePlan(std::string_view yaml, std::string_view source);
common::StatusOr<Plan> LoadPlan(const std::string& path);

// The phases a workload's own configuration file makes of `phase` (`config: FILE` in a plan,
// --postmark-config): one per run the file asks for, named like `phase` when there is one run
// and "<name>-1", "<name>-2", ... when there are several. `path` is taken as given (the caller
// resolves it); notes on lines the file's parser did not act on go to `notes`.
common::StatusOr<std::vector<PhasePlan>> PhasesFromConfig(const PhasePlan& phase,
                                                          const std::string& path,
                                                          std::vector<std::string>* notes);

// Sets one parameter of whichever workload the phase holds (controller/workloads/).
common::Status SetWorkloadParameter(std::string_view key, std::string_view value,
                                    stormark::v1::PhaseSpec* spec);

// Checks a whole phase: workload-specific rules (size a multiple of bs, ...) and the name.
common::Status ValidatePhase(const PhasePlan& phase);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_PLAN_H_
