// randio, as the controller's registry knows it (controller/workloads/workload_kinds.h).
#include "common/workloads/randio/randio_spec.h"
#include "controller/fleet/fleet.h"
#include "controller/report/summary.h"
#include "controller/workloads/randio/randio_params.h"
#include "controller/workloads/randio/randio_report.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller::randio_workload {

using stormark::v1::PhaseSpec;

const WorkloadKind& Kind() {
  static const WorkloadKind kKind{
      .name = "randio",
      .options = RandioOptions,
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_randio();
            RandioOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckRandioSpec(spec.randio()); },
      .describe = [](const PhaseSpec& spec) { return DescribeRandio(spec.randio()); },
      .expected_bytes = [](const PhaseSpec& spec) -> uint64_t {
        const auto& r = spec.randio();
        if (r.time_based()) return 0;
        return r.size_bytes() * std::max<uint32_t>(1, r.numjobs());
      },
      .prepare_bytes = [](const PhaseSpec& spec) -> uint64_t { return spec.randio().size_bytes(); },
      .runtime_nanos = [](const PhaseSpec& spec) -> int64_t {
        const auto& r = spec.randio();
        // startdelay and the ramp come first, unmeasured.
        return r.runtime_nanos() > 0
                   ? r.runtime_nanos() + r.ramp_time_nanos() + r.startdelay_nanos()
                   : 0;
      },
      .table = RandioTable,
      .table_shows_via = true,
  };
  return kKind;
}

}  // namespace stormark::controller::randio_workload
