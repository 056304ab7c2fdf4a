#include "controller/report/report_compare.h"

#include <algorithm>

#include "common/units.h"
#include "controller/plan/plan_sweep.h"
#include "controller/report/environment.h"
#include "controller/report/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using Align = TextTable::Align;

// Each phase's description at each sweep point, in first-run order: "seq-write" or
// "seq-write [bs=4k]" -> "stream write 1 GiB, bs 1 MiB, fdatasync".
std::vector<std::pair<std::string, std::string>> PlannedWork(const RunRecord& run) {
  std::vector<std::pair<std::string, std::string>> work;
  for (const PhaseOutcome& phase : run.phases) {
    const std::string sweep = DescribeSweepPoint(phase.plan.sweep_point);
    const std::string place =
        sweep.empty() ? phase.plan.name : fmt::format("{} [{}]", phase.plan.name, sweep);
    const bool seen = std::any_of(work.begin(), work.end(),
                                  [&](const auto& entry) { return entry.first == place; });
    if (!seen) work.emplace_back(place, phase.plan.Describe());
  }
  return work;
}

const Repetitions* Find(const std::vector<Repetitions>& groups, const SeriesKey& key) {
  auto it = std::find_if(groups.begin(), groups.end(),
                         [&key](const Repetitions& g) { return g.key == key; });
  return it == groups.end() ? nullptr : &*it;
}

ComparisonRow CompareGroups(const SeriesKey& key, const Repetitions* a, const Repetitions* b) {
  ComparisonRow row;
  row.key = key;
  if (a != nullptr) {
    row.runs_a = a->rows.size() + static_cast<size_t>(a->failed);
    row.failed_a = a->failed;
    row.qualified_a = a->qualified;
    row.invalid_a = a->invalid;
  }
  if (b != nullptr) {
    row.runs_b = b->rows.size() + static_cast<size_t>(b->failed);
    row.failed_b = b->failed;
    row.qualified_b = b->qualified;
    row.invalid_b = b->invalid;
  }
  for (const Metric& metric : Metrics()) {
    MetricComparison m{&metric, a ? a->Of(metric) : Spread{}, b ? b->Of(metric) : Spread{},
                       std::nullopt, Verdict::kMissing};
    if (m.a.count == 0 && m.b.count == 0) continue;
    if (m.a.count > 0 && m.b.count > 0 && m.a.median != 0) m.ratio = m.b.median / m.a.median;
    m.verdict = Judge(m.a, m.b, metric.higher_is_better);
    row.metrics.push_back(m);
  }
  return row;
}

// The environment of the row `key` names in `run`: its first repetition's, with the agent's
// facts from the start of the run where the phase brought none. Empty when the row is absent.
Environment EnvironmentOf(const RunRecord& run, const SeriesKey& key) {
  for (const PhaseOutcome& phase : run.phases) {
    if (phase.plan.name != key.phase || DescribeSweepPoint(phase.plan.sweep_point) != key.sweep) {
      continue;
    }
    for (const HostOutcome& host : phase.hosts) {
      if (host.host != key.host || host.target != key.target) continue;
      const AgentRecord* agent = nullptr;
      for (const AgentRecord& a : run.agents) {
        if (a.host == host.host) agent = &a;
      }
      return RowEnvironment(host, agent);
    }
  }
  return {};
}

std::string RunsCell(const ComparisonRow& row) {
  auto side = [](size_t runs, int failed) {
    return failed == 0 ? fmt::format("{}", runs) : fmt::format("{}({} failed)", runs, failed);
  };
  return fmt::format("{}/{}", side(row.runs_a, row.failed_a), side(row.runs_b, row.failed_b));
}

}  // namespace

Verdict Judge(const Spread& a, const Spread& b, bool higher_is_better) {
  if (a.count == 0 || b.count == 0) return Verdict::kMissing;
  if (a.count < 2 || b.count < 2) return Verdict::kNoiseUnknown;
  if (a.min <= b.max && b.min <= a.max) return Verdict::kWithinNoise;
  const bool b_higher = b.min > a.max;
  return b_higher == higher_is_better ? Verdict::kBetter : Verdict::kWorse;
}

std::string VerdictText(Verdict verdict) {
  switch (verdict) {
    case Verdict::kWithinNoise:
      return "within noise";
    case Verdict::kBetter:
      return "B better";
    case Verdict::kWorse:
      return "B worse";
    case Verdict::kNoiseUnknown:
      return "noise unknown";
    case Verdict::kMissing:
      break;
  }
  return "-";
}

std::vector<ComparisonRow> CompareRuns(const RunRecord& a, const RunRecord& b, bool aggregates) {
  const std::vector<Repetitions> groups_a = GroupRepetitions(a, aggregates);
  const std::vector<Repetitions> groups_b = GroupRepetitions(b, aggregates);
  std::vector<ComparisonRow> rows;
  for (const Repetitions& group : groups_a) {
    rows.push_back(CompareGroups(group.key, &group, Find(groups_b, group.key)));
  }
  for (const Repetitions& group : groups_b) {
    if (Find(groups_a, group.key) == nullptr) {
      rows.push_back(CompareGroups(group.key, nullptr, &group));
    }
  }
  return rows;
}

std::string PlanDifferences(const RunRecord& a, const RunRecord& b) {
  const auto work_a = PlannedWork(a);
  const auto work_b = PlannedWork(b);
  std::string lines;
  for (const auto& work : work_a) {
    auto other = std::find_if(work_b.begin(), work_b.end(),
                              [&](const auto& entry) { return entry.first == work.first; });
    if (other == work_b.end() || other->second == work.second) continue;
    lines +=
        fmt::format("    {}\n      A: {}\n      B: {}\n", work.first, work.second, other->second);
  }
  if (lines.empty()) return "";
  return fmt::format(
      "{} The runs did different work: their ratios compare different parameters, not only "
      "different\n  conditions.\n{}",
      kDiffersMark, lines);
}

std::string FormatComparison(const RunRecord& a, const RunRecord& b,
                             const std::vector<ComparisonRow>& rows) {
  std::string out = fmt::format("A  {}  started {}\nB  {}  started {}\n", a.run_id,
                                common::FormatIsoTime(a.started_unix_nanos), b.run_id,
                                common::FormatIsoTime(b.started_unix_nanos));
  // What differs between the runs comes before any figure.
  if (const std::string differ = PlanDifferences(a, b); !differ.empty()) out += differ + "\n";
  out +=
      "Figures are median [min-max] over the repetitions that succeeded. A difference is within\n"
      "noise when the two ranges overlap; with one repetition on a side the noise is unknown.\n\n";
  const bool sweeps = std::any_of(rows.begin(), rows.end(),
                                  [](const ComparisonRow& r) { return !r.key.sweep.empty(); });
  TextTable table;
  table.AddColumn("phase", Align::kLeft);
  if (sweeps) table.AddColumn("sweep", Align::kLeft);
  table.AddColumn("host", Align::kLeft);
  table.AddColumn("target", Align::kLeft);
  table.AddColumn("runs A/B", Align::kRight);
  table.AddColumn("metric", Align::kLeft);
  table.AddColumn("A", Align::kRight);
  table.AddColumn("B", Align::kRight);
  table.AddColumn("B/A", Align::kRight);
  table.AddColumn("verdict", Align::kLeft);
  // Settings that differ between A's row and B's, once per host, target and difference.
  std::vector<std::string> differs;
  std::vector<bool> marked;
  for (const ComparisonRow& row : rows) {
    const std::vector<Environment> envs = {EnvironmentOf(a, row.key), EnvironmentOf(b, row.key)};
    const std::vector<std::string> keys = DifferingKeys(envs);
    marked.push_back(!keys.empty());
    if (keys.empty()) continue;
    const std::string note = fmt::format("  {} {} {}: {}\n", kDiffersMark, row.key.host,
                                         row.key.target, FormatDiffers({"A", "B"}, envs, keys));
    if (std::find(differs.begin(), differs.end(), note) == differs.end()) differs.push_back(note);
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    const ComparisonRow& row = rows[r];
    std::string host = row.key.host + (marked[r] ? fmt::format(" {}", kDiffersMark) : "");
    if (row.invalid_a > 0 || row.invalid_b > 0) {
      host += row.invalid_a > 0 && row.invalid_b > 0 ? " INVALID"
              : row.invalid_a > 0                    ? " INVALID in A"
                                                     : " INVALID in B";
    }
    bool first = true;
    for (const MetricComparison& m : row.metrics) {
      std::vector<std::string> cells;
      // The row's place is printed once, on its first metric.
      auto place = [&](const std::string& text) { cells.push_back(first ? text : ""); };
      place(row.key.phase);
      if (sweeps) place(row.key.sweep);
      place(host);
      place(row.key.target);
      place(RunsCell(row));
      cells.push_back(std::string(m.metric->name));
      // Like the place, the mark of a row with notes is shown once, on its first figure.
      cells.push_back(FormatSpread(*m.metric, m.a, first && row.qualified_a));
      cells.push_back(FormatSpread(*m.metric, m.b, first && row.qualified_b));
      cells.push_back(m.ratio ? fmt::format("{:.2f}", *m.ratio) : "-");
      cells.push_back(row.runs_a == 0   ? "only in B"
                      : row.runs_b == 0 ? "only in A"
                                        : VerdictText(m.verdict));
      table.AddRow(std::move(cells));
      first = false;
    }
    if (row.metrics.empty()) {
      std::vector<std::string> cells = {row.key.phase};
      if (sweeps) cells.push_back(row.key.sweep);
      for (const std::string& text :
           {host, row.key.target, RunsCell(row), std::string("-"), std::string("-"),
            std::string("-"), std::string("-"), std::string("no successful run")}) {
        cells.push_back(text);
      }
      table.AddRow(std::move(cells));
    }
  }
  out += table.Render("  ");
  const bool qualified = std::any_of(rows.begin(), rows.end(), [](const ComparisonRow& r) {
    return r.qualified_a || r.qualified_b;
  });
  if (qualified || !differs.empty()) out += "\n";
  for (const std::string& note : differs) out += note;
  if (qualified) out += fmt::format("  {}\n", kQualifiedNote);
  return out;
}

}  // namespace stormark::controller
