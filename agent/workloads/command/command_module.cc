// command, as the agent's registry knows it (agent/workloads/workload_module.h).
#include <cstdint>

#include "agent/targets/dir/dir_target.h"
#include "agent/workloads/command/command.h"
#include "agent/workloads/workload_module.h"
#include "common/workloads/command/command_spec.h"

namespace stormark::agent::command_workload {
namespace {

using stormark::v1::PhaseSpec;

common::StatusOr<std::unique_ptr<Workload>> Make(const WorkloadInputs& in) {
  // Refused by policy before the phase directory is made (Prepare decides again), and before
  // the target is looked at, so a refusal reads the same on every target. A hook runs beside
  // the target, not in a directory of its own.
  RETURN_IF_ERROR(in.config.commands.Approve(in.spec.command()).status());
  std::unique_ptr<Dir> dir;
  if (!in.spec.command().hook()) {
    RETURN_IF_ERROR(NeedsFiles("command", in.target, in.caps));
    ASSIGN_OR_RETURN(dir, OpenPhaseDir(in.target, in.spec.phase_id()));
  }
  return std::unique_ptr<Workload>(
      new CommandWorkload(in.spec.command(), std::move(dir), in.target, in.config.commands));
}

int64_t RuntimeNanos(const PhaseSpec& spec) {
  const uint64_t ms = spec.command().timeout_ms();
  if (ms == 0) return 0;
  return ms > static_cast<uint64_t>(INT64_MAX / 1'000'000) ? INT64_MAX
                                                           : static_cast<int64_t>(ms) * 1'000'000;
}

}  // namespace

const WorkloadModule& Module() {
  static constexpr WorkloadModule kModule{
      .name = "command",
      .spec_case = PhaseSpec::kCommand,
      .check = [](const PhaseSpec& spec) { return common::CheckCommandSpec(spec.command()); },
      .program = [](const PhaseSpec& spec) { return &spec.command(); },
      .make = Make,
      .memory = [](const PhaseSpec& spec, const TargetConfig&,
                   const TargetCaps&) { return common::EstimateMemory(spec.command()); },
      .runtime_nanos = RuntimeNanos,
      .too_fast_hint = [](const PhaseSpec&) -> std::string_view {
        return "time a longer job (or several in one command line)";
      },
  };
  return kModule;
}

}  // namespace stormark::agent::command_workload
