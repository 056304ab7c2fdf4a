// The parts the chart sections of the HTML report share (report_charts.h draws a run's
// hosts, group_charts.h its groups of hosts): the phases of a run, what a phase's figures
// mean, sweep points as category labels, spreads as chart points, and latency histograms as
// percentile and CDF lines. All functions are pure.
#ifndef STORMARK_CONTROLLER_REPORT_HTML_CHART_PARTS_H_
#define STORMARK_CONTROLLER_REPORT_HTML_CHART_PARTS_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/histogram.h"
#include "controller/report/html/svg_chart.h"
#include "controller/report/repetitions.h"
#include "controller/run/run_record.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller::chart_parts {

inline constexpr double kMiB = 1024.0 * 1024.0;

// The index of `value` in `*list`, appended when absent.
size_t IndexOf(std::vector<std::string>* list, const std::string& value);

// The names of the run's phases, in the order they first ran.
std::vector<std::string> PhaseNames(const RunRecord& run);

// Hosts are named alone, unless one of them used several targets in the run.
bool TargetsMatter(const RunRecord& run);

// "db1", or "db1 / scratch" when targets matter.
std::string Member(const SeriesKey& key, bool with_target);

// `svg` in a <figure>; "" for "".
std::string Figure(const std::string& svg);

std::string Seconds(double s);
std::string Duration(double nanos);

// "341.5 [338.0-345.2] over 3 runs": what a point's tooltip says about its figure.
std::string SpreadTip(const Metric& metric, const Spread& spread);

// The spread's median, with its range as the whisker when there are several values.
ChartPoint SpreadPoint(double x, const Spread& spread, std::string tip);

// Percentile p as a distance along a "nines" axis: 50 -> 0.3, 90 -> 1, 99 -> 2, 99.9 -> 3.
double Nines(double percentile);

// The percentile line and the CDF line of histogram `h`, named `name`.
void AddLatencySeries(const std::string& name, const common::LatencyHistogram& h,
                      ChartSeries* percentiles, ChartSeries* cdf);

// The percentile chart's ticks up to `top` nines.
void AddNinesTicks(double top, ChartAxis* x);

// The sweep points as short category labels: only the values ("ext4 128" for "fs=ext4
// read_ahead_kb=128"), and the keys once, for the axis title ("fs, read_ahead_kb"). Points
// written otherwise are kept whole.
std::pair<std::vector<std::string>, std::string> CompactPoints(
    const std::vector<std::string>& points);

// A sweep point's value of `axis` ("" when the point has none), and its other keys and values
// as " key=value" each: a sweep chart's x and the line the point is on.
std::pair<std::string, std::string> AxisValue(const SweepPoint& point, const std::string& axis);

// The workload of the phase named `phase`, or nullptr.
const WorkloadKind* PhaseKind(const RunRecord& run, const std::string& phase);

// Whether the phase's totals mix tests of different kinds (bonnie's): no chart of them means
// anything, and its own table stands in for them.
bool Blended(const WorkloadKind* kind);

// Whether the phase's figures are rates and latencies a chart may compare: not a command's
// wall time, not bonnie's blended totals.
bool RatesMeanSomething(const RunRecord& run, const std::string& phase);

// The latency charts of a phase, empty: by percentile and CDF.
std::pair<Chart, Chart> LatencyChartFrames(const std::string& phase);

}  // namespace stormark::controller::chart_parts

#endif  // STORMARK_CONTROLLER_REPORT_HTML_CHART_PARTS_H_
