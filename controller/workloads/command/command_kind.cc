// command, as the controller's registry knows it (controller/workloads/workload_kinds.h).
#include "common/workloads/command/command_spec.h"
#include "controller/fleet/fleet.h"
#include "controller/report/summary.h"
#include "controller/workloads/command/command_params.h"
#include "controller/workloads/command/command_report.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller::command_workload {

using stormark::v1::PhaseSpec;

const WorkloadKind& Kind() {
  static const WorkloadKind kKind{
      .name = "command",
      .options = CommandOptions,
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_command();
            CommandOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckCommandSpec(spec.command()); },
      .describe = [](const PhaseSpec& spec) { return DescribeCommand(spec.command()); },
      .expected_bytes = [](const PhaseSpec&) -> uint64_t { return 0; },
      .table = CommandTable,
      .seconds = CommandSeconds,
  };
  return kKind;
}

}  // namespace stormark::controller::command_workload
