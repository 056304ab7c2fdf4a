#include "controller/report/host_groups.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "common/strings.h"
#include "common/units.h"
#include "controller/report/text_table.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using Align = TextTable::Align;
using common::StrCat;

constexpr std::string_view kLabelPrefix = "label:";
constexpr size_t kOutliersNamed = 8;

std::string GroupKey(const RowSummary& row, const TableView& view) {
  if (view.group_by == "target") return row.target;
  if (view.group_by.starts_with(kLabelPrefix)) {
    const std::string key = view.group_by.substr(kLabelPrefix.size());
    const auto host = view.labels.find(row.host);
    if (host != view.labels.end()) {
      const auto value = host->second.find(key);
      if (value != host->second.end()) return StrCat(key, "=", value->second);
    }
    return StrCat(key, " unset");
  }
  // A host that failed before its target was resolved (unreachable, or its clock sync timed
  // out), on its agent's default target: nothing says what it is.
  if (row.target.empty()) return "no target chosen";
  return row.transport.empty() ? row.target : StrCat(row.transport, " ", row.target);
}

std::string GroupedByText(const TableView& view) {
  if (view.group_by == "target") return "target";
  if (view.group_by.starts_with(kLabelPrefix)) {
    return StrCat("label ", view.group_by.substr(kLabelPrefix.size()));
  }
  return "via and target";
}

// The value at share `q` (0..1) of sorted `v`, interpolated between ranks.
double Quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

GroupFigure FigureOf(const PhaseOutcome& outcome, const PhaseSummary& summary) {
  const WorkloadKind* kind = KindOf(outcome.plan.spec);
  if (kind != nullptr && kind->seconds != nullptr) return {"wall s", false, false};
  if (kind != nullptr && kind->blended_totals) return {"elapsed s", false, false};
  if (kind != nullptr && kind->ops_figure) return {"ops/s", true, true};
  const bool bytes = std::any_of(summary.rows.begin(), summary.rows.end(),
                                 [](const RowSummary& row) { return row.bytes > 0; });
  return bytes ? GroupFigure{"MiB/s", true, true} : GroupFigure{"ops/s", true, true};
}

// The row's figure, when it succeeded and has one.
std::optional<double> FigureValue(const PhaseOutcome& outcome, const PhaseSummary& summary,
                                  const GroupFigure& figure, size_t i) {
  const RowSummary& row = summary.rows[i];
  if (row.status != "succeeded") return std::nullopt;
  if (figure.name == "wall s") {
    const WorkloadKind* kind = KindOf(outcome.plan.spec);
    if (i >= outcome.hosts.size() || !outcome.hosts[i].result) return std::nullopt;
    return kind->seconds(*outcome.hosts[i].result);
  }
  if (figure.name == "elapsed s") return row.elapsed_seconds;
  if (figure.name == "MiB/s") return row.bytes_per_second / (1024.0 * 1024.0);
  if (row.elapsed_seconds <= 0) return std::nullopt;
  return static_cast<double>(row.ops) / row.elapsed_seconds;
}

std::string FormatFigure(const GroupFigure& figure, double value) {
  if (figure.name == "ops/s") return common::FormatIops(value);
  return figure.name == "MiB/s" ? fmt::format("{:.1f}", value) : fmt::format("{:.2f}", value);
}

bool HasLatency(const PhaseOutcome& outcome, const PhaseSummary& summary) {
  const WorkloadKind* kind = KindOf(outcome.plan.spec);
  if (kind != nullptr && kind->blended_totals) return false;
  return std::any_of(summary.rows.begin(), summary.rows.end(),
                     [](const RowSummary& row) { return row.latency.count() > 0; });
}

std::optional<double> P99Nanos(const RowSummary& row) {
  if (row.status != "succeeded" || row.latency.count() == 0) return std::nullopt;
  return static_cast<double>(row.latency.Percentile(99));
}

std::string StatusCell(const PhaseSummary& summary, const std::vector<size_t>& rows) {
  std::vector<std::pair<std::string, size_t>> counts;
  for (const size_t i : rows) {
    const std::string& s = summary.rows[i].status;
    const std::string label = s == "succeeded" ? "ok"
                              : s == "error"   ? "ERROR"
                              : s == "aborted" ? "ABORTED"
                                               : "FAILED";
    auto it =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == label; });
    if (it == counts.end()) {
      counts.emplace_back(label, 1);
    } else {
      ++it->second;
    }
  }
  std::string cell;
  for (const auto& [label, n] : counts)
    cell += fmt::format("{}{} {}", cell.empty() ? "" : ", ", n, label);
  return cell;
}

// The group's hosts' work over its own first start to last end (the controller's clock), or
// the mean of their rates when they ran one at a time.
std::optional<double> GroupAggregate(const PhaseOutcome& outcome, const PhaseSummary& summary,
                                     const GroupFigure& figure, const std::vector<size_t>& rows) {
  if (!figure.aggregates) return std::nullopt;
  double work = 0, rate_sum = 0;
  int64_t first = INT64_MAX, last = INT64_MIN;
  size_t hosts = 0;
  for (const size_t i : rows) {
    const RowSummary& row = summary.rows[i];
    if (row.status != "succeeded" || i >= outcome.hosts.size()) continue;
    const HostOutcome& host = outcome.hosts[i];
    const int64_t start = host.result->start_unix_nanos() - host.clock.offset_nanos;
    first = std::min(first, start);
    last = std::max(last, start + host.result->elapsed_nanos());
    work += static_cast<double>(figure.name == "MiB/s" ? row.bytes : row.ops);
    if (const auto v = FigureValue(outcome, summary, figure, i)) rate_sum += *v;
    ++hosts;
  }
  if (hosts == 0) return std::nullopt;
  if (outcome.mode == RunMode::kSequential) return rate_sum / static_cast<double>(hosts);
  if (last <= first) return std::nullopt;
  const double rate = work / (static_cast<double>(last - first) / 1e9);
  return figure.name == "MiB/s" ? rate / (1024.0 * 1024.0) : rate;
}

std::vector<std::string> GroupRow(const PhaseOutcome& outcome, const PhaseSummary& summary,
                                  const GroupFigure& figure, bool latency, std::string name,
                                  const std::vector<size_t>& rows,
                                  std::optional<double> aggregate) {
  std::vector<double> values, p99s;
  bool noted = false;
  for (const size_t i : rows) {
    if (const auto v = FigureValue(outcome, summary, figure, i)) values.push_back(*v);
    if (const auto p = P99Nanos(summary.rows[i])) p99s.push_back(*p);
    noted = noted || !summary.rows[i].warnings.empty();
  }
  std::sort(values.begin(), values.end());
  std::sort(p99s.begin(), p99s.end());
  std::vector<std::string> cells = {std::move(name), fmt::format("{}", rows.size())};
  for (const double q : {0.0, 0.5, 0.99, 1.0}) {
    cells.push_back(values.empty() ? "-" : FormatFigure(figure, Quantile(values, q)));
  }
  // A figure qualified by a note is marked, so it is never read without it.
  if (noted && !values.empty()) cells[3] += " *";
  if (figure.aggregates) cells.push_back(aggregate ? FormatFigure(figure, *aggregate) : "-");
  if (latency) {
    for (const double q : {0.5, 1.0}) {
      cells.push_back(p99s.empty() ? "-" : common::FormatDurationNanos(Quantile(p99s, q)));
    }
  }
  cells.push_back(StatusCell(summary, rows));
  return cells;
}

// Values outside the fences and further than `share` of the median from it, by row.
void FlagOutside(const std::vector<std::pair<size_t, double>>& values, bool only_high, double share,
                 const std::function<std::string(double, bool)>& why,
                 std::map<size_t, std::string>* flagged) {
  if (values.size() < 4) return;
  std::vector<double> sorted;
  for (const auto& [row, v] : values) sorted.push_back(v);
  std::sort(sorted.begin(), sorted.end());
  const double q1 = Quantile(sorted, 0.25), q3 = Quantile(sorted, 0.75);
  const double median = Quantile(sorted, 0.5);
  const double iqr = q3 - q1;
  for (const auto& [row, v] : values) {
    const bool high = v > q3 + 1.5 * iqr, low = v < q1 - 1.5 * iqr;
    if (!(high || (low && !only_high))) continue;
    if (std::abs(v - median) <= share * std::abs(median)) continue;
    std::string& text = (*flagged)[row];
    text += StrCat(text.empty() ? "" : "; ", why(v, high));
  }
}

}  // namespace

TableView MakeTableView(bool all_hosts, const std::string& group_by,
                        const std::vector<AgentRecord>& agents) {
  TableView view;
  view.all_hosts = all_hosts;
  if (!group_by.empty()) view.group_by = group_by;
  for (const AgentRecord& agent : agents) {
    view.labels[agent.host].insert(agent.labels.begin(), agent.labels.end());
  }
  return view;
}

common::Status CheckGroupBy(std::string_view group_by) {
  if (group_by == "via" || group_by == "target") return absl::OkStatus();
  if (group_by.starts_with(kLabelPrefix) && group_by.size() > kLabelPrefix.size()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      StrCat("bad --group-by '", group_by,
             "': give via (how the storage is reached, and the target), target, or label:KEY"));
}

bool Collapses(const TableView& view, size_t hosts) {
  return !view.all_hosts && hosts > view.collapse_above;
}

std::vector<HostGroup> GroupHosts(const PhaseSummary& summary, const TableView& view) {
  std::vector<HostGroup> groups;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < summary.rows.size(); ++i) {
    const std::string key = GroupKey(summary.rows[i], view);
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back({key, {}});
    groups[it->second].rows.push_back(i);
  }
  return groups;
}

std::vector<Outlier> Outliers(const PhaseOutcome& outcome, const PhaseSummary& summary,
                              const HostGroup& group) {
  const GroupFigure figure = FigureOf(outcome, summary);
  std::map<size_t, std::string> flagged;
  std::vector<std::pair<size_t, double>> values, p99s;
  for (const size_t i : group.rows) {
    const RowSummary& row = summary.rows[i];
    if (row.status != "succeeded") {
      flagged[i] = row.status == "error"     ? "ERROR"
                   : row.status == "aborted" ? (IsPartial(row) ? "ABORTED, partial" : "ABORTED")
                                             : "FAILED";
      continue;
    }
    if (const auto v = FigureValue(outcome, summary, figure, i)) values.emplace_back(i, *v);
    if (const auto p = P99Nanos(row)) p99s.emplace_back(i, *p);
  }
  FlagOutside(
      values, false, kOutlierShare,
      [&](double v, bool high) {
        return StrCat(FormatFigure(figure, v), " ", figure.name, ", ", high ? "high" : "low");
      },
      &flagged);
  if (HasLatency(outcome, summary)) {
    FlagOutside(
        p99s, true, kOutlierLatencyShare,
        [](double v, bool) { return StrCat("p99 lat ", common::FormatDurationNanos(v), ", high"); },
        &flagged);
  }
  std::vector<Outlier> out;
  for (auto& [row, why] : flagged) out.push_back({row, std::move(why)});
  return out;
}

std::string GroupTable(const PhaseOutcome& outcome, const PhaseSummary& summary,
                       const TableView& view) {
  const GroupFigure figure = FigureOf(outcome, summary);
  const bool latency = HasLatency(outcome, summary);
  const std::vector<HostGroup> groups = GroupHosts(summary, view);
  TextTable table;
  table.AddColumn(StrCat("by ", GroupedByText(view)), Align::kLeft);
  table.AddColumn("hosts", Align::kRight);
  for (const char* q : {"min", "p50", "p99", "max"}) {
    table.AddColumn(StrCat(figure.name, " ", q), Align::kRight);
  }
  if (figure.aggregates) {
    table.AddColumn(outcome.mode == RunMode::kSequential ? "mean" : "aggregate", Align::kRight);
  }
  if (latency) {
    table.AddColumn("p99 lat p50", Align::kRight);
    table.AddColumn("p99 lat max", Align::kRight);
  }
  table.AddColumn("status", Align::kLeft);
  for (const HostGroup& group : groups) {
    table.AddRow(GroupRow(outcome, summary, figure, latency, group.name, group.rows,
                          GroupAggregate(outcome, summary, figure, group.rows)));
  }
  std::vector<size_t> every(summary.rows.size());
  for (size_t i = 0; i < every.size(); ++i) every[i] = i;
  if (summary.all_hosts) {
    // The fleet's aggregate is the all-hosts row's, the same figure the per-host table gives.
    const RowSummary& all = *summary.all_hosts;
    std::optional<double> aggregate = GroupAggregate(outcome, summary, figure, every);
    if (figure.name == "MiB/s") aggregate = all.bytes_per_second / (1024.0 * 1024.0);
    table.AddRow(GroupRow(outcome, summary, figure, latency,
                          all.invalid ? StrCat(all.host, " INVALID") : all.host, every, aggregate));
  }
  std::string out = table.Render("  ");

  std::string outliers;
  for (const HostGroup& group : groups) {
    const std::vector<Outlier> found = Outliers(outcome, summary, group);
    if (found.empty()) continue;
    std::string names;
    for (size_t k = 0; k < found.size() && k < kOutliersNamed; ++k) {
      names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", summary.rows[found[k].row].host,
                           found[k].why);
    }
    if (found.size() > kOutliersNamed) {
      names += fmt::format(" and {} more", found.size() - kOutliersNamed);
    }
    outliers += fmt::format("  outliers in {}: {}\n", group.name, names);
  }
  out += outliers.empty() ? "  no outliers: every host within its group's fences\n" : outliers;
  const WorkloadKind* kind = KindOf(outcome.plan.spec);
  out += fmt::format(
      "  {} hosts in {} group{} by {}; --all-hosts prints a row per host{}\n", summary.rows.size(),
      groups.size(), groups.size() == 1 ? "" : "s", GroupedByText(view),
      kind != nullptr && kind->table != nullptr ? StrCat(" and the ", kind->name, " table") : "");
  return out;
}

std::string NameList(const std::vector<std::string>& names, size_t max) {
  std::string out;
  const size_t shown = names.size() <= max + 1 ? names.size() : max;
  for (size_t i = 0; i < shown; ++i) {
    out += StrCat(i == 0 ? "" : i + 1 == names.size() ? " and " : ", ", names[i]);
  }
  if (shown < names.size()) out += fmt::format(" and {} more", names.size() - shown);
  return out;
}

std::string GroupedLines(std::string_view prefix,
                         const std::vector<std::pair<std::string, std::string>>& host_texts,
                         size_t max_lines) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // text -> hosts
  std::map<std::string, size_t> index;
  for (const auto& [host, text] : host_texts) {
    auto [it, added] = index.emplace(text, groups.size());
    if (added) groups.push_back({text, {}});
    groups[it->second].second.push_back(host);
  }
  std::string out;
  for (size_t g = 0; g < groups.size() && g < max_lines; ++g) {
    const auto& [text, hosts] = groups[g];
    out += hosts.size() == 1 ? fmt::format("  {} {}: {}\n", prefix, hosts.front(), text)
                             : fmt::format("  {} {} hosts ({}): {}\n", prefix, hosts.size(),
                                           NameList(hosts), text);
  }
  if (groups.size() > max_lines) {
    out += fmt::format("  {} and {} more (--all-hosts prints them all)\n", prefix,
                       groups.size() - max_lines);
  }
  return out;
}

}  // namespace stormark::controller
