// The comparison table of the reference posts, generated (`--baseline HOST`): for each
// phase, one row per host, target and sweep point, and for each metric the median and spread
// over the repetitions beside its ratio to the baseline host's median at the same sweep
// point; for a fleet, the rows at either end of that ratio. Pure.
#ifndef STORMARK_CONTROLLER_REPORT_REPORT_BASELINE_H_
#define STORMARK_CONTROLLER_REPORT_REPORT_BASELINE_H_

#include <string>

#include "common/status.h"
#include "controller/report/host_groups.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

// Past view.collapse_above hosts, and without view.all_hosts, a phase's table holds the
// baseline's rows and the kBaselineExtremes rows of lowest and of highest ratio to it (of the
// table's first metric), and a line gives that ratio's spread over every row.
inline constexpr size_t kBaselineExtremes = 5;

// NOT_FOUND, naming the run's first hosts, when `baseline_host` took no part in the run.
common::StatusOr<std::string> FormatBaselineTables(const RunRecord& run,
                                                   const std::string& baseline_host,
                                                   const TableView& view = {});

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_REPORT_BASELINE_H_
