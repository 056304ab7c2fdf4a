// stream, as the agent's registry knows it (agent/workloads/workload_module.h).
#include "agent/targets/dir/dir_target.h"
#include "agent/workloads/stream/stream.h"
#include "agent/workloads/workload_module.h"
#include "common/workloads/stream/stream_spec.h"

namespace stormark::agent::stream_workload {
namespace {

using stormark::v1::PhaseSpec;

common::StatusOr<std::unique_ptr<Workload>> Make(const WorkloadInputs& in) {
  const std::string filesystem = TargetFilesystem(in);
  if (!in.caps.files) {
    // A block, null or network target: its device, used in place.
    return std::unique_ptr<Workload>(
        new StreamWorkload(in.spec.stream(), in.target, filesystem, in.earlier, in.block));
  }
  if (in.handed != nullptr && *in.handed != nullptr &&
      StreamWorkload::Rereads(in.spec.stream(), **in.handed)) {
    return std::unique_ptr<Workload>(
        new StreamWorkload(in.spec.stream(), in.target, std::move(*in.handed), filesystem));
  }
  ASSIGN_OR_RETURN(auto dir, OpenPhaseDir(in.target, in.spec.phase_id()));
  return std::unique_ptr<Workload>(
      new StreamWorkload(in.spec.stream(), in.target, std::move(dir), filesystem));
}

}  // namespace

const WorkloadModule& Module() {
  static constexpr WorkloadModule kModule{
      .name = "stream",
      .spec_case = PhaseSpec::kStream,
      .check = [](const PhaseSpec& spec) { return common::CheckStreamSpec(spec.stream()); },
      // A read lays out its data first only on a disposable device (and on files, in its own
      // phase directory, which no other data shares).
      .writes =
          [](const PhaseSpec& spec, const TargetConfig& target) {
            if (spec.stream().direction() != stormark::v1::StreamSpec::READ) return true;
            return CapsOf(target).device && target.disposable;
          },
      .make = Make,
      .data_bytes = [](const PhaseSpec& spec, const HostFacts&) -> common::StatusOr<uint64_t> {
        return spec.stream().size_bytes();
      },
      .memory = [](const PhaseSpec& spec, const TargetConfig&,
                   const TargetCaps&) { return common::EstimateMemory(spec.stream()); },
  };
  return kModule;
}

}  // namespace stormark::agent::stream_workload
