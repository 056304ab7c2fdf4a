// trim, as the controller's registry knows it (controller/workloads/workload_kinds.h).
#include "common/workloads/trim/trim_spec.h"
#include "controller/workloads/trim/trim_params.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller::trim_workload {

using stormark::v1::PhaseSpec;

const WorkloadKind& Kind() {
  static const WorkloadKind kKind{
      .name = "trim",
      .options = TrimOptions,
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_trim();
            TrimOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckTrimSpec(spec.trim()); },
      .describe = [](const PhaseSpec& spec) { return DescribeTrim(spec.trim()); },
      .expected_bytes = [](const PhaseSpec& spec) -> uint64_t {
        return spec.trim().size_bytes() * (spec.trim().then_write() ? 2 : 1);
      },
      // The generic throughput and latency table: bytes discarded per second, and the latency
      // of each discard.
      .table = nullptr,
  };
  return kKind;
}

}  // namespace stormark::controller::trim_workload
