// The table a sweep or repeated run ends with, the one the reference posts build by hand: a
// row per host, target and sweep point, a column per phase, and in each cell the median
// over the repetitions with the range [min-max] beside it, so noise is visible at a glance.
#ifndef STORMARK_CONTROLLER_REPORT_SWEEP_TABLE_H_
#define STORMARK_CONTROLLER_REPORT_SWEEP_TABLE_H_

#include <string>
#include <vector>

#include "controller/fleet/fleet.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

// The metric a cell shows for one host's result of a phase: MiB/s for workloads that move
// data, seconds of wall time for commands and for workloads whose totals blend unlike tests
// (bonnie: its own tables give each test's figure); nullopt when the host did not succeed.
std::optional<double> CellMetric(const PhasePlan& plan, const HostOutcome& host);

// "" when no phase ran, or every phase ran once and there is no sweep (the phase tables say
// it all then). Reads each phase cut to its summaries back in full (run/full_phase.h), one at
// a time; one that cannot be read back is left out, and a line under the table says so.
std::string SweepSummaryTable(const RunRecord& run, int repeat);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_SWEEP_TABLE_H_
