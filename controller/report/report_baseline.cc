#include "controller/report/report_baseline.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "controller/report/repetitions.h"
#include "controller/report/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using Align = TextTable::Align;

// The figures the reference tables put side by side; a metric without a figure in a phase
// is left out of that phase's table.
constexpr std::string_view kBaselineMetrics[] = {"MiB/s", "ops/s", "p99 lat", "elapsed"};

std::string RatioCell(const Spread& value, const Spread& base) {
  if (value.count == 0 || base.count == 0 || base.median == 0) return "-";
  return fmt::format("{:.2f}", value.median / base.median);
}

// The table of one phase: the groups of `groups` whose phase is `phase`.
std::string PhaseTable(const std::vector<Repetitions>& groups, const std::string& phase,
                       const std::string& baseline_host, bool collapsed) {
  std::vector<const Repetitions*> rows;
  std::map<std::string, const Repetitions*> base_by_sweep;
  for (const Repetitions& g : groups) {
    if (g.key.phase != phase) continue;
    rows.push_back(&g);
    if (g.key.host == baseline_host) base_by_sweep.emplace(g.key.sweep, &g);
  }
  auto base_of = [&](const Repetitions& row) -> const Repetitions* {
    const auto it = base_by_sweep.find(row.key.sweep);
    return it == base_by_sweep.end() ? nullptr : it->second;
  };
  std::vector<const Metric*> metrics;
  for (std::string_view name : kBaselineMetrics) {
    const Metric* metric = FindMetric(name);
    if (std::any_of(rows.begin(), rows.end(),
                    [metric](const Repetitions* r) { return r->Of(*metric).count > 0; })) {
      metrics.push_back(metric);
    }
  }
  size_t most_runs = 0;
  for (const Repetitions* r : rows) most_runs = std::max(most_runs, r->rows.size());
  const bool sweeps = std::any_of(rows.begin(), rows.end(),
                                  [](const Repetitions* r) { return !r->key.sweep.empty(); });
  // A fleet: the baseline's rows and those at either end of the first metric's ratio.
  std::string spread_line;
  if (collapsed && !metrics.empty()) {
    std::vector<std::pair<double, const Repetitions*>> ratios;
    for (const Repetitions* r : rows) {
      const Repetitions* base = base_of(*r);
      const Spread value = r->Of(*metrics.front());
      if (base == nullptr || value.count == 0) continue;
      const Spread b = base->Of(*metrics.front());
      if (b.count > 0 && b.median != 0) ratios.emplace_back(value.median / b.median, r);
    }
    std::stable_sort(ratios.begin(), ratios.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::set<const Repetitions*> kept;
    for (size_t i = 0; i < ratios.size(); ++i) {
      if (i < kBaselineExtremes || i + kBaselineExtremes >= ratios.size()) {
        kept.insert(ratios[i].second);
      }
    }
    const size_t all = rows.size();
    std::erase_if(rows, [&](const Repetitions* r) {
      return r->key.host != baseline_host && !kept.contains(r);
    });
    if (!ratios.empty()) {
      spread_line = fmt::format(
          "  {} rows; shown: {}'s and the {} lowest and {} highest x base of {}; over every row: "
          "min {:.2f}, p50 {:.2f}, max {:.2f}; --all-hosts prints every row\n",
          all, baseline_host, kBaselineExtremes, kBaselineExtremes, metrics.front()->name,
          ratios.front().first, ratios[ratios.size() / 2].first, ratios.back().first);
    }
  }

  std::string out =
      fmt::format("{}: {}\n  against {}; ", phase, rows.front()->description, baseline_host);
  out += most_runs > 1 ? "median [min-max] over the repetitions that succeeded\n\n"
                       : "one repetition each: no spread to judge the noise by\n\n";
  auto via_of = [](const Repetitions& row) {
    return row.rows.empty() ? std::string() : row.rows.front().transport;
  };
  const bool via = std::any_of(rows.begin(), rows.end(),
                               [&](const Repetitions* r) { return !via_of(*r).empty(); });
  TextTable table;
  table.AddColumn("host", Align::kLeft);
  if (via) table.AddColumn("via", Align::kLeft);
  table.AddColumn("target", Align::kLeft);
  if (sweeps) table.AddColumn("sweep", Align::kLeft);
  table.AddColumn("runs", Align::kRight);
  for (const Metric* metric : metrics) {
    table.AddColumn(std::string(metric->name), Align::kRight);
    table.AddColumn("x base", Align::kRight);
  }
  for (const Repetitions* row : rows) {
    std::vector<std::string> cells = {row->key.host};
    if (via) cells.push_back(via_of(*row).empty() ? "-" : via_of(*row));
    cells.push_back(row->key.target);
    if (sweeps) cells.push_back(row->key.sweep);
    cells.push_back(row->failed == 0
                        ? fmt::format("{}", row->rows.size())
                        : fmt::format("{} ({} failed)", row->rows.size(), row->failed));
    const Repetitions* base = base_of(*row);
    for (const Metric* metric : metrics) {
      const Spread spread = row->Of(*metric);
      cells.push_back(FormatSpread(*metric, spread, row->qualified));
      cells.push_back(base == nullptr ? "-" : RatioCell(spread, base->Of(*metric)));
    }
    table.AddRow(std::move(cells));
  }
  out += table.Render("  ") + spread_line;
  if (std::any_of(rows.begin(), rows.end(), [](const Repetitions* r) { return r->qualified; })) {
    out += fmt::format("\n  {}\n", kQualifiedNote);
  }
  return out;
}

}  // namespace

common::StatusOr<std::string> FormatBaselineTables(const RunRecord& run,
                                                   const std::string& baseline_host,
                                                   const TableView& view) {
  const bool known = std::any_of(run.agents.begin(), run.agents.end(),
                                 [&](const AgentRecord& a) { return a.host == baseline_host; });
  if (!known) {
    std::vector<std::string> hosts;
    for (const AgentRecord& a : run.agents) hosts.push_back(a.host);
    return absl::NotFoundError(common::StrCat("--baseline ", baseline_host, ": not a host of run ",
                                              run.run_id, " (hosts: ", NameList(hosts, 5), ")"));
  }
  const bool collapsed = Collapses(view, run.agents.size());
  const std::vector<Repetitions> groups = GroupRepetitions(run, /*aggregates=*/false);
  std::vector<std::string> phases;
  for (const Repetitions& g : groups) {
    if (std::find(phases.begin(), phases.end(), g.key.phase) == phases.end()) {
      phases.push_back(g.key.phase);
    }
  }
  std::string out = fmt::format("Compared with {}\n\n", baseline_host);
  for (const std::string& phase : phases) {
    out += PhaseTable(groups, phase, baseline_host, collapsed) + "\n";
  }
  return out;
}

}  // namespace stormark::controller
