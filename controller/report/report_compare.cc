#include "controller/report/report_compare.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

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

// The rows of `groups` by key: a fleet's comparison looks up thousands.
std::map<SeriesKey, const Repetitions*> ByKey(const std::vector<Repetitions>& groups) {
  std::map<SeriesKey, const Repetitions*> by_key;
  for (const Repetitions& g : groups) by_key.emplace(g.key, &g);
  return by_key;
}

const Repetitions* Find(const std::map<SeriesKey, const Repetitions*>& groups,
                        const SeriesKey& key) {
  const auto it = groups.find(key);
  return it == groups.end() ? nullptr : it->second;
}

ComparisonRow CompareGroups(const SeriesKey& key, const Repetitions* a, const Repetitions* b) {
  ComparisonRow row;
  row.key = key;
  row.aggregate = a != nullptr ? a->aggregate : b != nullptr && b->aggregate;
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

// Where each row's environment is in a run: its first repetition's host outcome, and its
// agent (the last of that name).
class EnvironmentIndex {
 public:
  explicit EnvironmentIndex(const RunRecord& run) {
    std::map<std::string, const AgentRecord*> agents;
    for (const AgentRecord& a : run.agents) agents[a.host] = &a;
    for (const PhaseOutcome& phase : run.phases) {
      const std::string sweep = DescribeSweepPoint(phase.plan.sweep_point);
      for (const HostOutcome& host : phase.hosts) {
        const auto agent = agents.find(host.host);
        rows_.emplace(SeriesKey{phase.plan.name, sweep, host.host, host.target},
                      std::pair{&host, agent == agents.end() ? nullptr : agent->second});
      }
    }
  }

  // The environment of the row `key` names: its first repetition's, with the agent's facts
  // from the start of the run where the phase brought none. Empty when the row is absent.
  Environment Of(const SeriesKey& key) const {
    const auto it = rows_.find(key);
    if (it == rows_.end()) return {};
    return RowEnvironment(*it->second.first, it->second.second);
  }

 private:
  std::map<SeriesKey, std::pair<const HostOutcome*, const AgentRecord*>> rows_;
};

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
  const auto by_key_a = ByKey(groups_a), by_key_b = ByKey(groups_b);
  std::vector<ComparisonRow> rows;
  for (const Repetitions& group : groups_a) {
    rows.push_back(CompareGroups(group.key, &group, Find(by_key_b, group.key)));
  }
  for (const Repetitions& group : groups_b) {
    if (Find(by_key_a, group.key) == nullptr) {
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

bool Changed(const ComparisonRow& row) {
  if (row.runs_a == 0 || row.runs_b == 0 || row.failed_a > 0 || row.failed_b > 0) return true;
  return std::any_of(row.metrics.begin(), row.metrics.end(), [](const MetricComparison& m) {
    return m.verdict == Verdict::kBetter || m.verdict == Verdict::kWorse;
  });
}

namespace {

// A change for the worse: a figure worse beyond the noise, the row gone from B, or B's
// repetitions failing.
bool Worse(const ComparisonRow& row) {
  if (row.runs_b == 0 || row.failed_b > 0) return true;
  return std::any_of(row.metrics.begin(), row.metrics.end(),
                     [](const MetricComparison& m) { return m.verdict == Verdict::kWorse; });
}

// A phase at a sweep point of a fleet's comparison: what its hosts' rows say together.
struct PlaceSummary {
  std::string phase, sweep;
  // By host: 0 within noise, 1 noise unknown, 2 changed (a host with rows on two targets, one
  // of them only in one run, counts once, as its worst).
  std::map<std::string, int> hosts;
  std::vector<const ComparisonRow*> changed;
  // A host's B/A of the first metric of the place's first host row.
  std::string_view ratio_metric;
  std::vector<double> ratios;
};

// The rows a fleet's comparison prints (the all-hosts rows, and the hosts that changed, the
// worse first, at most kChangedRowsShown per place), and the lines that count the rest.
std::pair<std::vector<const ComparisonRow*>, std::string> Collapse(
    const std::vector<ComparisonRow>& rows) {
  std::vector<PlaceSummary> places;
  for (const ComparisonRow& row : rows) {
    if (row.aggregate) continue;
    auto it = std::find_if(places.begin(), places.end(), [&](const PlaceSummary& p) {
      return p.phase == row.key.phase && p.sweep == row.key.sweep;
    });
    if (it == places.end()) {
      places.push_back({row.key.phase, row.key.sweep, {}, {}, {}, {}});
      it = places.end() - 1;
    }
    int state = 0;
    if (Changed(row)) {
      it->changed.push_back(&row);
      state = 2;
    } else if (std::any_of(row.metrics.begin(), row.metrics.end(), [](const MetricComparison& m) {
                 return m.verdict == Verdict::kNoiseUnknown;
               })) {
      state = 1;
    }
    int& host_state = it->hosts[row.key.host];
    host_state = std::max(host_state, state);
    if (row.metrics.empty()) continue;
    if (it->ratio_metric.empty()) it->ratio_metric = row.metrics.front().metric->name;
    for (const MetricComparison& m : row.metrics) {
      if (m.metric->name == it->ratio_metric && m.ratio) it->ratios.push_back(*m.ratio);
    }
  }
  std::string lines;
  for (PlaceSummary& place : places) {
    std::stable_sort(
        place.changed.begin(), place.changed.end(),
        [](const ComparisonRow* x, const ComparisonRow* y) { return Worse(*x) && !Worse(*y); });
    size_t count[3] = {0, 0, 0};
    for (const auto& [host, state] : place.hosts) ++count[state];
    const size_t shown = std::min(place.changed.size(), kChangedRowsShown);
    std::string line =
        fmt::format("  {}{}: {} hosts: {} within noise, {} noise unknown, {} changed", place.phase,
                    place.sweep.empty() ? "" : " [" + place.sweep + "]", place.hosts.size(),
                    count[0], count[1], count[2]);
    if (!place.changed.empty()) {
      line += shown == place.changed.size()
                  ? " (in the table, the worse first)"
                  : fmt::format(" ({} rows in the table, the worse first)", shown);
    }
    place.changed.resize(shown);
    if (!place.ratios.empty()) {
      std::sort(place.ratios.begin(), place.ratios.end());
      line += fmt::format("; a host's {} B/A: min {:.2f}, p50 {:.2f}, max {:.2f}",
                          place.ratio_metric, place.ratios.front(),
                          place.ratios[place.ratios.size() / 2], place.ratios.back());
    }
    lines += line + "\n";
  }
  lines += "  --all-hosts prints a row per host\n";
  // Each place's changed hosts, the worse first, where its first host row was; the all-hosts
  // rows where they were.
  std::vector<const ComparisonRow*> printed;
  std::set<const PlaceSummary*> placed;
  for (const ComparisonRow& row : rows) {
    if (row.aggregate) {
      printed.push_back(&row);
      continue;
    }
    const auto place = std::find_if(places.begin(), places.end(), [&](const PlaceSummary& p) {
      return p.phase == row.key.phase && p.sweep == row.key.sweep;
    });
    if (placed.insert(&*place).second) {
      printed.insert(printed.end(), place->changed.begin(), place->changed.end());
    }
  }
  return {printed, lines};
}

}  // namespace

std::string FormatComparison(const RunRecord& a, const RunRecord& b,
                             const std::vector<ComparisonRow>& rows, const TableView& view) {
  const bool collapsed = Collapses(view, std::max(a.agents.size(), b.agents.size()));
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
  const EnvironmentIndex index_a(a), index_b(b);
  std::vector<std::pair<std::string, std::string>> differs;  // (host and target, difference)
  std::set<const ComparisonRow*> marked;
  for (const ComparisonRow& row : rows) {
    const std::vector<Environment> envs = {index_a.Of(row.key), index_b.Of(row.key)};
    const std::vector<std::string> keys = DifferingKeys(envs);
    if (keys.empty()) continue;
    marked.insert(&row);
    std::pair note{fmt::format("{} {}", row.key.host, row.key.target),
                   FormatDiffers({"A", "B"}, envs, keys)};
    if (std::find(differs.begin(), differs.end(), note) == differs.end()) {
      differs.push_back(std::move(note));
    }
  }
  std::vector<const ComparisonRow*> printed;
  std::string counts;
  if (collapsed) {
    std::tie(printed, counts) = Collapse(rows);
  } else {
    for (const ComparisonRow& row : rows) printed.push_back(&row);
  }
  for (const ComparisonRow* printed_row : printed) {
    const ComparisonRow& row = *printed_row;
    std::string host =
        row.key.host + (marked.contains(&row) ? fmt::format(" {}", kDiffersMark) : "");
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
  if (collapsed) out += "\n" + counts;
  const bool qualified = std::any_of(rows.begin(), rows.end(), [](const ComparisonRow& r) {
    return r.qualified_a || r.qualified_b;
  });
  if (qualified || !differs.empty()) out += "\n";
  if (collapsed) {
    out += GroupedLines(kDiffersMark, differs);
  } else {
    for (const auto& [where, text] : differs) {
      out += fmt::format("  {} {}: {}\n", kDiffersMark, where, text);
    }
  }
  if (qualified) out += fmt::format("  {}\n", kQualifiedNote);
  return out;
}

}  // namespace stormark::controller
