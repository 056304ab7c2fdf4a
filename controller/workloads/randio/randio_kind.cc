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
        uint64_t bytes = 0;
        for (int i = -1; i < spec.randio().group_size(); ++i) {
          const auto& r = i < 0 ? spec.randio() : spec.randio().group(i);
          if (r.time_based()) return 0;
          bytes += r.size_bytes() * std::max<uint32_t>(1, r.numjobs());
        }
        return bytes;
      },
      .prepare_bytes = [](const PhaseSpec& spec) -> uint64_t {
        uint64_t bytes = spec.randio().size_bytes();
        for (const auto& r : spec.randio().group()) bytes = std::max(bytes, r.size_bytes());
        return bytes;
      },
      .runtime_nanos = [](const PhaseSpec& spec) -> int64_t {
        // startdelay and the ramp come first, unmeasured; a run group lasts as its longest
        // job, and as long as its size takes when any job is bound by its size.
        int64_t longest = 0;
        for (int i = -1; i < spec.randio().group_size(); ++i) {
          const auto& r = i < 0 ? spec.randio() : spec.randio().group(i);
          if (r.runtime_nanos() <= 0) return 0;
          longest =
              std::max(longest, r.runtime_nanos() + r.ramp_time_nanos() + r.startdelay_nanos());
        }
        return longest;
      },
      .table = RandioTable,
      .table_shows_via = true,
      .ops_figure = true,
  };
  return kKind;
}

}  // namespace stormark::controller::randio_workload
