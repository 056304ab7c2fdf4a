// The comparison table of the reference posts, generated (`--baseline HOST`): for each
// phase, one row per host, target and sweep point, and for each metric the median and spread
// over the repetitions beside its ratio to the baseline host's median at the same sweep
// point. Pure.
#ifndef STORMARK_CONTROLLER_REPORT_REPORT_BASELINE_H_
#define STORMARK_CONTROLLER_REPORT_REPORT_BASELINE_H_

#include <string>

#include "common/status.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

// NOT_FOUND, naming the run's hosts, when `baseline_host` took no part in the run.
common::StatusOr<std::string> FormatBaselineTables(const RunRecord& run,
                                                   const std::string& baseline_host);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_REPORT_BASELINE_H_
