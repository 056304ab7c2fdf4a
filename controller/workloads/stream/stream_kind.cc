// stream, as the controller's registry knows it (controller/workloads/workload_kinds.h).
#include "nlohmann/json.hpp"
#include "common/workloads/stream/stream_spec.h"
#include "controller/fleet/fleet.h"
#include "controller/report/summary.h"
#include "controller/workloads/stream/stream_params.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller::stream_workload {

using stormark::v1::PhaseSpec;

const WorkloadKind& Kind() {
  static const WorkloadKind kKind{
      .name = "stream",
      .options = StreamOptions,
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_stream();
            StreamOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckStreamSpec(spec.stream()); },
      .describe = [](const PhaseSpec& spec) { return DescribeStream(spec.stream()); },
      .expected_bytes = [](const PhaseSpec& spec) { return spec.stream().size_bytes(); },
      .prepare_bytes = [](const PhaseSpec& spec) -> uint64_t { return spec.stream().size_bytes(); },
      .table = nullptr,
      .json = [](const PhaseSpec& spec) { return StreamSpecJson(spec.stream()); },
      .reads_back =
          [](const PhaseSpec& writer, const PhaseSpec& next) {
            return next.has_stream() &&
                   writer.stream().direction() == stormark::v1::StreamSpec::WRITE &&
                   next.stream().direction() == stormark::v1::StreamSpec::READ &&
                   next.stream().size_bytes() <= writer.stream().size_bytes();
          },
  };
  return kKind;
}

}  // namespace stormark::controller::stream_workload
