// The chart sections of the HTML report, each a sequence of <figure> elements holding inline
// SVG (svg_chart.h), built from a run as `stormark run` recorded it:
//
// - Throughput: MiB/s and IOPS per phase, a bar per host and target in a group per sweep
//   point; the bar is the median over repetitions, the whisker their range.
// - Latency: per phase, the latency at each percentile and the CDF, one line per host (and
//   sweep point), from the host's histograms merged over repetitions (never averaged).
// - Time series: per phase run, each host's MiB/s (IOPS for phases that move no bytes) in
//   every interval the agent reported, but a last interval shorter than half the one before
//   (the remainder of the run, too short for a rate).
// - Sweeps: per phase and swept parameter, the phase's figure (MiB/s, or wall seconds for
//   commands) against the parameter's values, one line per host (and value of the other
//   parameters): the chunk-size and read-ahead curves of the reference posts.
//
// Each returns "" when the run has nothing to draw there. All functions are pure.
#ifndef STORMARK_CONTROLLER_REPORT_HTML_REPORT_CHARTS_H_
#define STORMARK_CONTROLLER_REPORT_HTML_REPORT_CHARTS_H_

#include <string>

#include "controller/run/run_record.h"

namespace stormark::controller {

std::string ThroughputCharts(const RunRecord& run);
std::string LatencyCharts(const RunRecord& run);
std::string TimeSeriesCharts(const RunRecord& run);
std::string SweepCharts(const RunRecord& run);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HTML_REPORT_CHARTS_H_
