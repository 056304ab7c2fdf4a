// bonnie, as the agent's registry knows it (agent/workloads/workload_module.h).
#include "agent/targets/dir/dir_target.h"
#include "agent/workloads/bonnie/bonnie.h"
#include "agent/workloads/workload_module.h"
#include "common/workloads/bonnie/bonnie_spec.h"

namespace stormark::agent::bonnie_workload {
namespace {

using stormark::v1::PhaseSpec;

common::StatusOr<std::unique_ptr<Workload>> Make(const WorkloadInputs& in) {
  ASSIGN_OR_RETURN(auto dir, OpenPhaseDir(in.target, in.spec.phase_id()));
  return std::unique_ptr<Workload>(
      new BonnieWorkload(in.spec.bonnie(), std::move(dir), in.host, TargetFilesystem(in)));
}

// The I/O tests' file, and every file of the file tests at their largest.
common::StatusOr<uint64_t> DataBytes(const PhaseSpec& spec, const HostFacts& host) {
  ASSIGN_OR_RETURN(BonnieParams p, BonnieWorkload::Resolve(spec.bonnie(), host.ram_bytes));
  return common::SaturatingAdd(p.run_io ? p.size_bytes : 0,
                               common::SaturatingMul(p.files, p.file_max_bytes));
}

// Its files: each file test creates them all before it deletes any, so they are also the
// most it holds at once.
uint64_t Files(const PhaseSpec& spec) { return uint64_t{spec.bonnie().files_k()} * 1024; }

}  // namespace

const WorkloadModule& Module() {
  static constexpr WorkloadModule kModule{
      .name = "bonnie",
      .spec_case = PhaseSpec::kBonnie,
      .check = [](const PhaseSpec& spec) { return common::CheckBonnieSpec(spec.bonnie()); },
      .check_target = [](const PhaseSpec&, const TargetConfig& target,
                         const TargetCaps& caps) { return NeedsFiles("bonnie", target, caps); },
      .make = Make,
      .data_bytes = DataBytes,
      .files = Files,
      .live_files = Files,
      .memory = [](const PhaseSpec& spec, const TargetConfig&,
                   const TargetCaps&) { return common::EstimateMemory(spec.bonnie()); },
  };
  return kModule;
}

}  // namespace stormark::agent::bonnie_workload
