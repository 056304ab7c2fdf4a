// randio, as the agent's registry knows it (agent/workloads/workload_module.h).
#include <algorithm>
#include <climits>

#include "agent/targets/dir/dir_target.h"
#include "agent/workloads/randio/randio.h"
#include "agent/workloads/workload_module.h"
#include "common/workloads/randio/randio_spec.h"

namespace stormark::agent::randio_workload {
namespace {

using stormark::v1::PhaseSpec;

common::StatusOr<std::unique_ptr<Workload>> Make(const WorkloadInputs& in) {
  std::unique_ptr<Dir> dir;
  if (in.caps.files) {
    ASSIGN_OR_RETURN(dir, OpenPhaseDir(in.target, in.spec.phase_id()));
  }
  return std::unique_ptr<Workload>(new RandioWorkload(in.spec.randio(), in.target, std::move(dir),
                                                      in.host, TargetFilesystem(in), in.block));
}

// The file it lays out: its jobs' regions, each at its offset.
common::StatusOr<uint64_t> DataBytes(const PhaseSpec& spec, const HostFacts&) {
  // A run group shares one file, as large as its largest job's span.
  uint64_t bytes = 0;
  for (int i = -1; i < spec.randio().group_size(); ++i) {
    const stormark::v1::RandioSpec& r = i < 0 ? spec.randio() : spec.randio().group(i);
    const uint64_t size =
        r.size_bytes() == 0 ? RandioWorkload::kDefaultDirFileSize : r.size_bytes();
    const uint64_t jobs = r.numjobs() == 0 ? 1 : r.numjobs();
    bytes = std::max(
        bytes, common::SaturatingAdd(common::SaturatingAdd(r.offset_bytes(), size),
                                     common::SaturatingMul(jobs - 1, r.offset_increment_bytes())));
  }
  return bytes;
}

common::MemoryEstimate Memory(const PhaseSpec& spec, const TargetConfig& target,
                              const TargetCaps& caps) {
  const uint64_t region = caps.files ? common::kRandioDefaultDirFileBytes : target.size;
  return common::EstimateMemory(spec.randio(), region, spec.series_interval_ms());
}

// The longest job's; 0 (not known) when any job of a run group is bound by its size.
int64_t RuntimeNanos(const PhaseSpec& spec) {
  int64_t longest = 0;
  for (int i = -1; i < spec.randio().group_size(); ++i) {
    const stormark::v1::RandioSpec& r = i < 0 ? spec.randio() : spec.randio().group(i);
    if (r.runtime_nanos() <= 0) return 0;
    const int64_t lead =
        std::max<int64_t>(0, r.ramp_time_nanos()) + std::max<int64_t>(0, r.startdelay_nanos());
    longest = std::max(longest,
                       r.runtime_nanos() > INT64_MAX - lead ? INT64_MAX : r.runtime_nanos() + lead);
  }
  return longest;
}

}  // namespace

const WorkloadModule& Module() {
  static constexpr WorkloadModule kModule{
      .name = "randio",
      .spec_case = PhaseSpec::kRandio,
      .check = [](const PhaseSpec& spec) { return common::CheckRandioSpec(spec.randio()); },
      .writes = [](const PhaseSpec& spec,
                   const TargetConfig&) { return common::RandioWrites(spec.randio()); },
      .make = Make,
      .data_bytes = DataBytes,
      .memory = Memory,
      .runtime_nanos = RuntimeNanos,
      .too_fast_hint = [](const PhaseSpec& spec) -> std::string_view {
        return spec.randio().runtime_nanos() > 0 ? "use a longer runtime" : "use a larger size";
      },
  };
  return kModule;
}

}  // namespace stormark::agent::randio_workload
