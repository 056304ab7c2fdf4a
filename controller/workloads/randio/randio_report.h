// The result table of a randio phase, as fio users read one: per host and per operation type
// (read, write, flush), IOPS, MiB/s and the latency percentiles p50, p90, p99, p99.9, p99.99
// and max, from histograms merged across jobs (by the agent) and across hosts (here, for the
// "all hosts" rows); CPU% per host. Then, when there are several jobs or hosts, the stonewall
// figures (elbencho's "first done" and "last done"), and the verification outcome when the
// phase verified.
//
// Pure and thread-safe.
#ifndef STORMARK_CONTROLLER_WORKLOADS_RANDIO_RANDIO_REPORT_H_
#define STORMARK_CONTROLLER_WORKLOADS_RANDIO_RANDIO_REPORT_H_

#include <string>

namespace stormark::controller {

struct PhaseOutcome;
struct PhaseSummary;

std::string RandioTable(const PhaseOutcome& outcome, const PhaseSummary& summary);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_RANDIO_RANDIO_REPORT_H_
