// The controller's registry of workloads: for each one, its option table (how a plan file,
// `--set` and sweeps set its parameters), how it is checked and described, and how its results
// are printed. Each workload is a module, controller/workloads/<name>/, whose <name>_kind.cc
// defines `<name>_workload::Kind()`; the build lists every such folder
// (controller/CMakeLists.txt), so adding a workload changes no file outside its own module.
#ifndef STORMARK_CONTROLLER_WORKLOADS_WORKLOAD_KINDS_H_
#define STORMARK_CONTROLLER_WORKLOADS_WORKLOAD_KINDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "controller/workloads/option_table.h"
#include "nlohmann/json_fwd.hpp"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

struct PhaseOutcome;
struct PhaseSummary;

struct WorkloadKind {
  // The name in plans, on the command line and in AgentInfo.workloads; also the name of the
  // PhaseSpec oneof field that carries it.
  std::string_view name;
  // Its options: the only list of the parameters plans, `--set` and sweeps may give it, with
  // their aliases, defaults and help (option_table.h).
  const OptionTable& (*options)();
  // Selects the workload in `spec` and fills in its options' defaults.
  void (*init)(stormark::v1::PhaseSpec* spec);
  // The first problem with the whole spec, as one line, or OK.
  common::Status (*validate)(const stormark::v1::PhaseSpec& spec);
  // One line for tables: "stream write 1 GiB, bs 1 MiB, fdatasync".
  std::string (*describe)(const stormark::v1::PhaseSpec& spec);
  // Bytes one host moves in the phase, for the live progress bar; 0 when unknown.
  uint64_t (*expected_bytes)(const stormark::v1::PhaseSpec& spec);
  // Bytes its set-up may write (the file a phase lays out), for the default prepare deadline;
  // nullptr for none.
  uint64_t (*prepare_bytes)(const stormark::v1::PhaseSpec& spec) = nullptr;
  // The runtime it asks for, ramp included, for the phase deadline; nullptr or 0 when it ends
  // with its work (the deadline then follows its progress).
  int64_t (*runtime_nanos)(const stormark::v1::PhaseSpec& spec) = nullptr;
  // The phase's result table, or nullptr for the generic throughput and latency table.
  std::string (*table)(const PhaseOutcome& outcome, const PhaseSummary& summary);
  // The phase's "workload" object in the JSON report (report_json.h), without the "type" the
  // report adds; nullptr for the spec's fields under their protobuf names.
  nlohmann::json (*json)(const stormark::v1::PhaseSpec& spec) = nullptr;
  // Reads the workload's own configuration file (PostMark's script) at `path`, starting from
  // `spec`: one spec per run the file asks for, plus notes on lines it did not act on. nullptr
  // when the workload has no such file.
  common::StatusOr<std::vector<stormark::v1::PhaseSpec>> (*load_config)(
      const std::string& path, const stormark::v1::PhaseSpec& spec,
      std::vector<std::string>* notes) = nullptr;
  // The figure sweep tables and charts show for one host's result, in seconds, when the
  // workload's figure is a duration (a command's wall time), or nullopt when the result has
  // none; nullptr for the usual figure, the phase's throughput in MiB/s.
  std::optional<double> (*seconds)(const stormark::v1::PhaseResult& result) = nullptr;
  // Whether its result table shows each row's transport itself (a "via" column), so that the
  // phase's header need not say it.
  bool table_shows_via = false;
  // Whether its headline figure is operations per second (random I/O, PostMark's file
  // operations) rather than MiB/s: the table of a large fleet (host_groups.h) spreads that one.
  bool ops_figure = false;
  // Whether the phase's total bytes and operations mix tests of different kinds (bonnie's
  // block writes, seeks and file creates), so that a throughput or latency over all of them
  // means nothing: reports show only its own table.
  bool blended_totals = false;
  // One line of the classic tool's CSV for one host's result (bonnie++'s, for `--csv` and
  // `results export --format bonnie-csv`); nullptr when there is no such format.
  std::string (*csv_line)(const std::string& host,
                          const stormark::v1::PhaseResult& result) = nullptr;
  // Whether `next`, run right after `writer` on the same target, reads what `writer` wrote
  // (a stream read of at most a stream write's size): the writer then asks the agent to hand
  // its file over (PhaseSpec.hand_over_to), so that a dir target reads back the file written
  // instead of laying out a second one. nullptr: never.
  bool (*reads_back)(const stormark::v1::PhaseSpec& writer,
                     const stormark::v1::PhaseSpec& next) = nullptr;
};

// Every workload the controller knows, in the order of their names.
const std::vector<const WorkloadKind*>& WorkloadKinds();

// The kind named `name`, or nullptr.
const WorkloadKind* FindWorkloadKind(std::string_view name);

// The kind `spec` holds, or nullptr when it holds none the controller knows.
const WorkloadKind* KindOf(const stormark::v1::PhaseSpec& spec);

// The succeeded hosts' results of a phase, labelled by host (for a workload's table).
std::vector<std::pair<std::string, stormark::v1::PhaseResult>> SucceededHosts(
    const PhaseOutcome& outcome);

// "bonnie, command, ...", for error messages.
std::string WorkloadNames();

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_WORKLOAD_KINDS_H_
