// The controller's table of workloads: for each one, how a plan file or `--set` sets its
// parameters, how it is checked and described, and how its results are printed. Adding a
// workload to the controller is one entry here plus its own *_params and report files.
#ifndef STORMARK_CONTROLLER_WORKLOADS_WORKLOAD_KINDS_H_
#define STORMARK_CONTROLLER_WORKLOADS_WORKLOAD_KINDS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

struct PhaseOutcome;
struct PhaseSummary;

struct WorkloadKind {
  // The name in plans, on the command line and in AgentInfo.workloads; also the name of the
  // PhaseSpec oneof field that carries it.
  std::string_view name;
  // The parameters it accepts, for error messages ("rw, size, bs, direct, fdatasync").
  std::string_view parameters;
  // Parameters a plan phase must give (stream's "rw"); the others have defaults.
  std::vector<std::string_view> required;
  // Selects the workload in `spec` and fills in its defaults.
  void (*init)(stormark::v1::PhaseSpec* spec);
  // Sets one parameter from its text form; INVALID_ARGUMENT names the key and the value.
  common::Status (*set)(std::string_view key, std::string_view value,
                        stormark::v1::PhaseSpec* spec);
  // The first problem with the whole spec, as one line, or OK.
  common::Status (*validate)(const stormark::v1::PhaseSpec& spec);
  // One line for tables: "stream write 1 GiB, bs 1 MiB, fdatasync".
  std::string (*describe)(const stormark::v1::PhaseSpec& spec);
  // Bytes one host moves in the phase, for the live progress bar; 0 when unknown.
  uint64_t (*expected_bytes)(const stormark::v1::PhaseSpec& spec);
  // The phase's result table, or nullptr for the generic throughput and latency table.
  std::string (*table)(const PhaseOutcome& outcome, const PhaseSummary& summary);
  // Reads the workload's own configuration file (PostMark's script) at `path`, starting from
  // `spec`: one spec per run the file asks for, plus notes on lines it did not act on. nullptr
  // when the workload has no such file.
  common::StatusOr<std::vector<stormark::v1::PhaseSpec>> (*load_config)(
      const std::string& path, const stormark::v1::PhaseSpec& spec,
      std::vector<std::string>* notes) = nullptr;
};

// Every workload the controller knows, in the order help texts list them.
const std::vector<WorkloadKind>& WorkloadKinds();

// The kind named `name`, or nullptr.
const WorkloadKind* FindWorkloadKind(std::string_view name);

// The kind `spec` holds, or nullptr when it holds none the controller knows.
const WorkloadKind* KindOf(const stormark::v1::PhaseSpec& spec);

// Whether `key` is one of the kind's parameters.
bool AcceptsParameter(const WorkloadKind& kind, std::string_view key);

// "stream, bonnie, ...", for error messages.
std::string WorkloadNames();

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_WORKLOAD_KINDS_H_
