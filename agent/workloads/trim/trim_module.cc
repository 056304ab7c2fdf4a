// trim, as the agent's registry knows it (agent/workloads/workload_module.h).
#include "agent/workloads/trim/trim.h"
#include "agent/workloads/workload_module.h"
#include "common/strings.h"
#include "common/workloads/trim/trim_spec.h"

namespace stormark::agent::trim_workload {
namespace {

using stormark::v1::PhaseSpec;

// A discard needs a device of this host: a block device or a regular file. The network
// initiators do not send TRIM or UNMAP (yet), and a dir target's files are the file workloads'.
common::Status CheckTarget(const PhaseSpec&, const TargetConfig& target, const TargetCaps& caps) {
  if (caps.device && caps.local_path) return absl::OkStatus();
  return absl::InvalidArgumentError(
      common::StrCat("trim runs on a block target (a block device or a file); '", target.name,
                     "' is a ", target.kind, " target"));
}

common::StatusOr<std::unique_ptr<Workload>> Make(const WorkloadInputs& in) {
  return std::unique_ptr<Workload>(new TrimWorkload(in.spec.trim(), in.target, in.block));
}

}  // namespace

const WorkloadModule& Module() {
  static constexpr WorkloadModule kModule{
      .name = "trim",
      .spec_case = PhaseSpec::kTrim,
      .check = [](const PhaseSpec& spec) { return common::CheckTrimSpec(spec.trim()); },
      .check_target = CheckTarget,
      .make = Make,
      .memory = [](const PhaseSpec& spec, const TargetConfig& target,
                   const TargetCaps&) { return common::EstimateMemory(spec.trim(), target.size); },
  };
  return kModule;
}

}  // namespace stormark::agent::trim_workload
