// What to run: the phases, in order, and optionally the agents. Comes from a small YAML plan
// file or from command-line flags, and is validated completely before anything runs.
//
//   agents: [ "db1:7420", "db2:7420" ]   # optional; --agent replaces it
//   target: scratch                      # optional default target for every phase
//   mode: concurrent                     # or sequential: one host at a time
//   cache: drop                          # before each timed region: keep (default), sync,
//                                        # or drop (sync, then drop the page cache)
//   phases:
//     - name: seq-write
//       workload: stream
//       rw: write
//       size: 1G
//       bs: 1M
//       fdatasync: true
//       cache: keep                      # a phase may set its own
//     - name: bonnie
//       workload: bonnie                 # parameters: controller/workloads/bonnie_params.h
//       files: 16:0:0:1
#ifndef STORMARK_CONTROLLER_PLAN_H_
#define STORMARK_CONTROLLER_PLAN_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// One value of each swept parameter, in the order the sweep names them:
// {{"chunk", "64k"}, {"read_ahead_kb", "4096"}}. Empty outside a sweep.
using SweepPoint = std::vector<std::pair<std::string, std::string>>;

// "chunk=64k read_ahead_kb=4096", or "" for no sweep.
std::string DescribeSweepPoint(const SweepPoint& point);

struct PhasePlan {
  // Shown in tables; [A-Za-z0-9._-].
  std::string name;
  // Which run of the phase this is, 0-based (`repeat: N` runs each phase N times).
  int repetition = 0;
  // The sweep point this run of the phase belongs to.
  SweepPoint sweep_point;
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

// "keep"/"sync"/"drop"; INVALID_ARGUMENT otherwise.
common::StatusOr<stormark::v1::CacheMode> ParseCacheMode(std::string_view text);

// "concurrent"/"sequential"; INVALID_ARGUMENT otherwise.
common::StatusOr<RunMode> ParseRunMode(std::string_view text);

struct Plan {
  std::vector<std::string> agents;
  RunMode mode = RunMode::kConcurrent;
  std::vector<PhasePlan> phases;
};

// The plan `stormark run` uses when given none: write 1 GiB with fdatasync, then read it
// back from outside the page cache, in 1 MiB blocks.
Plan DefaultPlan();

// Parses and validates a plan. Errors read "plan.yaml:7: phase 'w': bad size '10X': ...".
common::StatusOr<Plan> ParsePlan(std::string_view yaml, std::string_view source);
common::StatusOr<Plan> LoadPlan(const std::string& path);

// Sets one parameter of whichever workload the phase holds (controller/workloads/).
common::Status SetWorkloadParameter(std::string_view key, std::string_view value,
                                    stormark::v1::PhaseSpec* spec);

// Checks a whole phase: workload-specific rules (size a multiple of bs, ...) and the name.
common::Status ValidatePhase(const PhasePlan& phase);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_PLAN_H_
