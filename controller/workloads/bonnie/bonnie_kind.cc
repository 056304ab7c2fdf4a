// bonnie, as the controller's registry knows it (controller/workloads/workload_kinds.h).
#include "nlohmann/json.hpp"
#include "common/workloads/bonnie/bonnie_spec.h"
#include "controller/fleet/fleet.h"
#include "controller/report/summary.h"
#include "controller/workloads/bonnie/bonnie_params.h"
#include "controller/workloads/bonnie/bonnie_report.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller::bonnie_workload {

using stormark::v1::PhaseSpec;

const WorkloadKind& Kind() {
  static const WorkloadKind kKind{
      .name = "bonnie",
      .options = BonnieOptions,
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_bonnie();
            BonnieOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckBonnieSpec(spec.bonnie()); },
      .describe = [](const PhaseSpec& spec) { return DescribeBonnie(spec.bonnie()); },
      .expected_bytes = [](const PhaseSpec&) -> uint64_t { return 0; },
      .table =
          [](const PhaseOutcome& outcome, const PhaseSummary&) {
            // bonnie++'s own layout, one row per host, so the figures read as bonnie++'s do.
            return BonnieTextTable(SucceededHosts(outcome));
          },
      .json = [](const PhaseSpec& spec) { return BonnieSpecJson(spec.bonnie()); },
      .blended_totals = true,
      .csv_line = BonnieCsvLine,
  };
  return kKind;
}

}  // namespace stormark::controller::bonnie_workload
