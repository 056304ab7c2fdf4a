// The exports of a run for other tools (`stormark results export RUN --format ...`):
//
// - CSV: one row per phase run, host and metric, for spreadsheets and scripts:
//     run_id,started,phase_index,phase,repetition,sweep_point,host,target,status,metric,value,
//     unit,marks
//   Metrics of a host that succeeded: bytes (B), ops (ops), elapsed (s), throughput (B/s),
//   iops (ops/s), cpu (%), latency_p50, latency_p90, latency_p99, latency_p99_9,
//   latency_max (ns). A host that did not succeed has a row with metric "error" and the error
//   as its value; one aborted after it had done work also has its figures so far. Each of a
//   host's notes is a row with metric "note". `marks` carries the phase table's marks for
//   every row of the host: "*" (its figures have notes), "~" (partial: until an abort), or
//   both. RFC 4180 quoting.
// - bonnie++ CSV: one line per host and bonnie phase, as `stormark run --csv` writes them
//   (workloads/bonnie_report.h).
// - Prometheus text exposition format (version 0.0.4): gauges per phase run and host, and
//   the latency as a summary, labelled with label, phase, sweep, repetition (1-based), host
//   and target; the run id labels stormark_run_start_time_seconds only, so that successive
//   runs of a plan continue the same time series. No timestamps: a Pushgateway refuses them.
//
// All functions are pure.
#ifndef STORMARK_CONTROLLER_REPORT_REPORT_EXPORT_H_
#define STORMARK_CONTROLLER_REPORT_REPORT_EXPORT_H_

#include <string>

#include "common/status.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

std::string RunCsv(const RunRecord& run);
// The bonnie++ CSV lines of its phases: one per host, from each workload that has such a
// format (WorkloadKind::csv_line). A phase cut to its summaries is read back in full
// (run/full_phase.h); *read_back (when given) gets the first error of one that cannot be,
// whose hosts then have no line.
std::string RunBonnieCsv(const RunRecord& run, common::Status* read_back = nullptr);
// `label` is the run's label in the results history.
std::string RunPrometheus(const RunRecord& run, const std::string& label);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_REPORT_EXPORT_H_
