#include "controller/report/sweep_table.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "common/strings.h"
#include "controller/report/environment.h"
#include "controller/report/summary.h"
#include "controller/report/text_table.h"
#include "controller/run/full_phase.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::StrCat;

struct RowKey {
  std::string host;
  std::string target;
  SweepPoint point;
  bool operator<(const RowKey& o) const {
    return std::tie(host, target, point) < std::tie(o.host, o.target, o.point);
  }
};

std::string Cell(std::vector<double> values, int repeat, bool seconds) {
  if (values.empty()) return "-";
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  const std::string unit = seconds ? " s" : "";
  std::string cell = fmt::format("{:.{}f}{}", median, seconds ? 3 : 1, unit);
  if (n > 1) {
    cell += fmt::format(" [{:.{}f}-{:.{}f}]", values.front(), seconds ? 3 : 1, values.back(),
                        seconds ? 3 : 1);
  }
  if (static_cast<int>(n) < repeat) cell += fmt::format(" ({}/{} ok)", n, repeat);
  return cell;
}

}  // namespace

std::optional<double> CellMetric(const PhasePlan& plan, const HostOutcome& host) {
  if (!host.succeeded()) return std::nullopt;
  const WorkloadKind* kind = KindOf(plan.spec);
  if (kind != nullptr && kind->seconds != nullptr) return kind->seconds(*host.result);
  const double seconds = static_cast<double>(host.result->elapsed_nanos()) / 1e9;
  if (seconds <= 0) return std::nullopt;
  // Bytes over a bonnie run's whole time would blend block writes, seeks and file creates
  // into one rate that means nothing; its wall time at least is what it is.
  if (kind != nullptr && kind->blended_totals) return seconds;
  return static_cast<double>(host.result->bytes()) / seconds / (1024.0 * 1024.0);
}

std::string SweepSummaryTable(const RunRecord& run, int repeat) {
  const std::vector<PhaseOutcome>& phases = run.phases;
  bool swept = false;
  std::vector<std::string> columns;  // Phase names, in first-run order.
  for (const PhaseOutcome& outcome : phases) {
    swept = swept || !outcome.plan.sweep_point.empty();
    if (std::find(columns.begin(), columns.end(), outcome.plan.name) == columns.end()) {
      columns.push_back(outcome.plan.name);
    }
  }
  if (phases.empty() || (!swept && repeat <= 1)) return "";

  std::vector<RowKey> rows;
  std::map<RowKey, size_t> row_of;  // A linear search per host took seconds at 10,000 hosts.
  // Per row: the transport label and the environment of its first repetition.
  std::vector<std::string> via;
  std::vector<Environment> envs;
  // values[row][column]: the metric of each repetition that succeeded.
  std::vector<std::vector<std::vector<double>>> values;
  // flagged[row][column]: a run of the cell carries a note (too fast, cache, ...).
  std::vector<std::vector<bool>> flagged;
  std::vector<bool> is_seconds(columns.size(), false);
  common::Status unread;  // The first phase that could not be read back: its cells are left out.
  for (size_t p = 0; p < phases.size(); ++p) {
    const FullPhase full(run, p);
    full.KeepFirstError(&unread);
    if (!full.status().ok()) continue;
    const PhaseOutcome& outcome = *full;
    const size_t column =
        std::find(columns.begin(), columns.end(), outcome.plan.name) - columns.begin();
    const WorkloadKind* kind = KindOf(outcome.plan.spec);
    is_seconds[column] = kind != nullptr && (kind->seconds != nullptr || kind->blended_totals);
    for (const HostOutcome& host : outcome.hosts) {
      RowKey key{host.host, host.target, outcome.plan.sweep_point};
      const auto [it, added] = row_of.try_emplace(key, rows.size());
      if (added) {
        rows.push_back(std::move(key));
        via.push_back(host.transport);
        envs.push_back(RowEnvironment(host, nullptr));
        values.emplace_back(columns.size());
        flagged.emplace_back(columns.size(), false);
      }
      const size_t row = it->second;
      if (auto metric = CellMetric(outcome.plan, host)) {
        values[row][column].push_back(*metric);
        if (host.result->warnings_size() > 0) flagged[row][column] = true;
      }
    }
  }

  const bool via_column =
      std::any_of(via.begin(), via.end(), [](const std::string& v) { return !v.empty(); });
  const SweepPoint& axes = rows.empty() ? SweepPoint() : rows.front().point;
  // Settings a sweep changes differ by design; the rest must not differ unnoticed.
  std::vector<std::string> ignore;
  for (const auto& [axis, value] : axes) ignore.push_back(axis);
  const std::vector<std::string> differing = DifferingKeys(envs, ignore);
  std::vector<std::string> names;
  for (const RowKey& row : rows) {
    std::string name = row.host;
    const bool one_target = std::all_of(rows.begin(), rows.end(),
                                        [&](const RowKey& r) { return r.target == row.target; });
    if (!one_target) name += "/" + row.target;
    if (!row.point.empty()) name += " [" + DescribeSweepPoint(row.point) + "]";
    names.push_back(std::move(name));
  }

  TextTable table;
  table.AddColumn("host", TextTable::Align::kLeft);
  if (via_column) table.AddColumn("via", TextTable::Align::kLeft);
  table.AddColumn("target", TextTable::Align::kLeft);
  for (const auto& [axis, value] : axes) table.AddColumn(axis, TextTable::Align::kLeft);
  for (size_t c = 0; c < columns.size(); ++c) {
    table.AddColumn(columns[c] + (is_seconds[c] ? " (wall)" : " MiB/s"), TextTable::Align::kRight);
  }
  bool any_flagged = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::string> cells = {
        rows[r].host + (RowDiffers(r, envs, differing) ? StrCat(" ", kDiffersMark) : "")};
    if (via_column) cells.push_back(via[r].empty() ? "-" : via[r]);
    cells.push_back(rows[r].target);
    for (const auto& [axis, value] : rows[r].point) cells.push_back(value);
    for (size_t c = 0; c < columns.size(); ++c) {
      cells.push_back(Cell(values[r][c], repeat, is_seconds[c]) + (flagged[r][c] ? " *" : ""));
      any_flagged = any_flagged || flagged[r][c];
    }
    table.AddRow(cells);
  }
  std::string out = repeat > 1
                        ? fmt::format("Summary: median of {} runs, [min-max] beside it\n\n", repeat)
                        : "Summary\n\n";
  out += table.Render("  ");
  if (any_flagged || !differing.empty() || !unread.ok()) out += "\n";
  if (!differing.empty()) {
    out += fmt::format("  {} {}\n", kDiffersMark, FormatDiffers(names, envs, differing));
  }
  if (any_flagged) {
    out +=
        "  * a run in this cell carries a note (too fast to time, cache, ...): see its phase "
        "table\n";
  }
  if (!unread.ok()) {
    out += fmt::format("  note: {}: that phase's runs are left out of this table\n",
                       std::string(unread.message()));
  }
  return out;
}

}  // namespace stormark::controller
