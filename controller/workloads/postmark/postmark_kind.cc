// postmark, as the controller's registry knows it (controller/workloads/workload_kinds.h).
#include "common/workloads/postmark/postmark_spec.h"
#include "controller/fleet/fleet.h"
#include "controller/report/summary.h"
#include "controller/workloads/postmark/postmark_config.h"
#include "controller/workloads/postmark/postmark_params.h"
#include "controller/workloads/postmark/postmark_report.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller::postmark_workload {

using stormark::v1::PhaseSpec;

const WorkloadKind& Kind() {
  static const WorkloadKind kKind{
      .name = "postmark",
      .options = PostmarkOptions,
      // PostMark's defaults, written out so that plans and reports show them.
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_postmark();
            PostmarkOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckPostmarkSpec(spec.postmark()); },
      .describe = [](const PhaseSpec& spec) { return DescribePostmark(spec.postmark()); },
      // What a run moves depends on its choices; the progress line shows bytes without a bar.
      .expected_bytes = [](const PhaseSpec&) -> uint64_t { return 0; },
      .table =
          [](const PhaseOutcome& outcome, const PhaseSummary&) {
            return PostmarkPhaseReport(
                SucceededHosts(outcome),
                outcome.plan.spec.postmark().report() == stormark::v1::PostmarkSpec::TERSE);
          },
      .load_config =
          [](const std::string& path, const PhaseSpec& spec,
             std::vector<std::string>* notes) -> common::StatusOr<std::vector<PhaseSpec>> {
        ASSIGN_OR_RETURN(PostmarkConfig config, LoadPostmarkConfig(path, spec.postmark()));
        notes->insert(notes->end(), config.notes.begin(), config.notes.end());
        std::vector<PhaseSpec> specs;
        for (const stormark::v1::PostmarkSpec& run : config.runs) {
          PhaseSpec one = spec;
          *one.mutable_postmark() = run;
          specs.push_back(std::move(one));
        }
        return specs;
      },
      .ops_figure = true,
  };
  return kKind;
}

}  // namespace stormark::controller::postmark_workload
