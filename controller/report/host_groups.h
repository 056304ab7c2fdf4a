// A phase's table when there are too many hosts for a row each: one row per group of hosts
// (how their storage is reached and the target, a label's value, or the target alone), each
// giving the spread of the hosts' figures (min, p50, p99, max) and the group's aggregate,
// then the hosts that stand out by name. The notes beneath are grouped by text, so a note
// every host shares is one line. The JSON report and the results store keep every host;
// only the printed table collapses, and `--all-hosts` prints a row per host again.
#ifndef STORMARK_CONTROLLER_REPORT_HOST_GROUPS_H_
#define STORMARK_CONTROLLER_REPORT_HOST_GROUPS_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "controller/fleet/fleet.h"
#include "controller/run/run_record.h"
#include "controller/report/summary.h"

namespace stormark::controller {

// Past this many hosts, a phase's table shows groups rather than hosts.
inline constexpr size_t kCollapseAbove = 32;

// How the tables of `stormark run` and `stormark results show` lay out a phase's hosts.
struct TableView {
  // --all-hosts: a row per host, however many there are.
  bool all_hosts = false;
  // Past this many hosts the table collapses into groups.
  size_t collapse_above = kCollapseAbove;
  // --group-by: "via" (the default: how the storage is reached, and the target), "target", or
  // "label:KEY" (the hosts' value of that label; hosts without it form their own group).
  std::string group_by = "via";
  // Each host's labels, by host name, for "label:KEY".
  std::map<std::string, std::map<std::string, std::string>> labels;
};

// The view of `--all-hosts` and `--group-by`, with each agent's labels from `agents`.
TableView MakeTableView(bool all_hosts, const std::string& group_by,
                        const std::vector<AgentRecord>& agents);

// The first problem with a --group-by value, as one line, or OK.
common::Status CheckGroupBy(std::string_view group_by);

// Whether a phase of `hosts` rows is printed as groups under `view`.
bool Collapses(const TableView& view, size_t hosts);

struct HostGroup {
  std::string name;          // "AoE scratch", "rack=r1", "rack unset"
  std::vector<size_t> rows;  // indices into PhaseSummary::rows, in fleet order
};

// The groups of a phase's rows under `view`, in the order of their first host.
std::vector<HostGroup> GroupHosts(const PhaseSummary& summary, const TableView& view);

// The figure a group table spreads: the phase's throughput in MiB/s, its operations per
// second when it moved no bytes, or a duration (a command's wall time, kind->seconds).
struct GroupFigure {
  std::string name;  // "MiB/s", "ops/s", "wall s"
  bool higher_is_better = true;
  // Whether the group's aggregate (its hosts' work over its first start to its last end, or
  // their mean when they ran one at a time) means anything for this figure.
  bool aggregates = true;
};

// A host that stands out in its group: not succeeded, or a figure outside Tukey's fences
// (1.5 interquartile ranges beyond the quartiles) and more than kOutlierShare from the group's
// median, or a p99 latency beyond the upper fence and kOutlierLatencyShare above the median
// (tails swing more than rates). `why` is "FAILED", "41.2 MiB/s, low", "p99 lat 31 ms, high".
struct Outlier {
  size_t row = 0;
  std::string why;
};
inline constexpr double kOutlierShare = 0.10;
inline constexpr double kOutlierLatencyShare = 0.50;
std::vector<Outlier> Outliers(const PhaseOutcome& outcome, const PhaseSummary& summary,
                              const HostGroup& group);

// The group table, the outlier lines and the line that says how the hosts were grouped.
std::string GroupTable(const PhaseOutcome& outcome, const PhaseSummary& summary,
                       const TableView& view);

// "a, b, c and 997 more": at most `max` names.
std::string NameList(const std::vector<std::string>& names, size_t max = 3);

// Lines of per-host text, grouped by text: "  PREFIX 998 hosts (a, b, c and 995 more): TEXT";
// a text only one host has keeps the usual "  PREFIX host: TEXT". At most `max_lines`, then
// one line that counts the rest and names --all-hosts.
std::string GroupedLines(std::string_view prefix,
                         const std::vector<std::pair<std::string, std::string>>& host_texts,
                         size_t max_lines = 24);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HOST_GROUPS_H_
