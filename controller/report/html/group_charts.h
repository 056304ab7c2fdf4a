// The charts of the HTML report for a run of more hosts than a chart can tell apart: past
// TableView::collapse_above hosts, and without --all-hosts, each chart draws the groups of
// host_groups.h (how the storage is reached and the target, a label's value, or the target)
// instead of the hosts, and draws on their own the hosts that stand out (host_groups.h
// Outliers). A line per host of two thousand hosts is a page no browser opens (296 MB at
// 2,000 hosts of 400 samples each) and a chart nobody can read.
//
// - Throughput: per phase, a bar per group and sweep point: the median host's figure (each
//   host's figure being its median over repetitions), the whisker from the lowest host to the
//   highest.
// - Latency: per phase, a line per group from its hosts' histograms merged over hosts and
//   repetitions (never averaged), the all-hosts line, and a line for each host flagged for
//   its p99 latency (at most kHostsDrawn).
// - Time series: per phase run, on the controller's clock from the first host's start, in
//   at most kMaxIntervals intervals: the group's hosts' rates summed (what the group did
//   together), and the median host's rate with the range across hosts as a band, with the
//   outliers' own lines.
// - Sweeps: per phase and swept parameter, a line per group: the median host, the whisker
//   from the lowest host to the highest.
//
// Each returns "" when the run has nothing to draw there. All functions are pure; a host's
// series is opened one host at a time (fleet/packed_series.h).
#ifndef STORMARK_CONTROLLER_REPORT_HTML_GROUP_CHARTS_H_
#define STORMARK_CONTROLLER_REPORT_HTML_GROUP_CHARTS_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/report/host_groups.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

// Hosts drawn on their own in a chart of groups, at most.
inline constexpr size_t kHostsDrawn = 8;
// Intervals of a time series of groups, at most: longer phases merge adjacent samples.
inline constexpr size_t kMaxIntervals = 150;

// The groups of every phase run of a run, as its tables show them (host_groups.h), made once
// for all the charts of a page.
struct FleetGroups {
  // Every group of the run, in the order of its first host.
  std::vector<std::string> names;
  // By phase run and host index: the index of the host's group in `names`.
  std::vector<std::vector<size_t>> of;
  // By phase run: the hosts that stand out in their group (row = host index).
  std::vector<std::vector<Outlier>> outliers;
  // The group of each host in the first run of each phase, by (phase name, host).
  std::map<std::pair<std::string, std::string>, size_t> of_host;

  // The group of `host` in the phase named `phase`, or nullopt.
  std::optional<size_t> Of(const std::string& phase, const std::string& host) const;
};
FleetGroups GroupFleet(const RunRecord& run, const TableView& view);

std::string GroupThroughputCharts(const RunRecord& run, const FleetGroups& groups);
std::string GroupLatencyCharts(const RunRecord& run, const FleetGroups& groups);
std::string GroupTimeSeriesCharts(const RunRecord& run, const FleetGroups& groups);
std::string GroupSweepCharts(const RunRecord& run, const FleetGroups& groups);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HTML_GROUP_CHARTS_H_
