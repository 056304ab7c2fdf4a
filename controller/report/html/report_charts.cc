#include "controller/report/html/report_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

#include "common/strings.h"
#include "common/units.h"
#include "controller/fleet/packed_series.h"
#include "controller/report/html/chart_parts.h"
#include "controller/report/html/svg_chart.h"
#include "controller/report/repetitions.h"
#include "controller/report/report_table.h"
#include "controller/report/sweep_table.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {

using namespace chart_parts;  // NOLINT: the parts every chart section draws with.

std::string ThroughputCharts(const RunRecord& run) {
  const std::vector<Repetitions> groups = GroupRepetitions(run, /*aggregates=*/false);
  const bool with_target = TargetsMatter(run);
  std::string out;
  for (const std::string& phase : PhaseNames(run)) {
    if (!RatesMeanSomething(run, phase)) continue;
    std::vector<std::string> sweeps, members;
    for (const Repetitions& g : groups) {
      if (g.key.phase != phase) continue;
      IndexOf(&sweeps, g.key.sweep);
      IndexOf(&members, Member(g.key, with_target));
    }
    const bool swept = sweeps.size() > 1 || (!sweeps.empty() && !sweeps[0].empty());
    const auto [labels, axis_title] = CompactPoints(sweeps);
    for (const auto& [metric_name, title] :
         {std::pair{"MiB/s", "throughput, MiB/s"}, std::pair{"ops/s", "IOPS (operations/s)"}}) {
      const Metric& metric = *FindMetric(metric_name);
      Chart chart;
      chart.title = fmt::format("{}: {}", phase, title);
      chart.x.title = swept ? axis_title : "";
      chart.x.categories = swept ? labels : std::vector<std::string>{phase};
      chart.y.title = title;
      chart.series.resize(members.size());
      for (size_t m = 0; m < members.size(); ++m) chart.series[m].name = members[m];
      for (const Repetitions& g : groups) {
        if (g.key.phase != phase) continue;
        const Spread spread = g.Of(metric);
        if (spread.count == 0) continue;
        const std::string member = Member(g.key, with_target);
        const size_t m = IndexOf(&members, member);
        chart.series[m].points.push_back(
            SpreadPoint(static_cast<double>(IndexOf(&sweeps, g.key.sweep)), spread,
                        fmt::format("{}{}{}: {}", member, swept ? " " : "", g.key.sweep,
                                    SpreadTip(metric, spread))));
      }
      out += Figure(BarChartSvg(chart));
    }
  }
  return out;
}

std::string LatencyCharts(const RunRecord& run) {
  const std::vector<Repetitions> groups = GroupRepetitions(run, /*aggregates=*/true);
  const bool with_target = TargetsMatter(run);
  std::string out;
  for (const std::string& phase : PhaseNames(run)) {
    if (!RatesMeanSomething(run, phase)) continue;
    auto [percentiles, cdf] = LatencyChartFrames(phase);
    double top = Nines(90);
    for (const Repetitions& g : groups) {
      if (g.key.phase != phase) continue;
      const bool aggregate = g.aggregate;
      if (aggregate && !g.key.sweep.empty()) continue;  // One line per host and point is enough.
      common::LatencyHistogram merged;
      for (const RowSummary& row : g.rows) merged.Merge(row.latency);
      if (merged.count() == 0) continue;
      top = std::max(top, std::min(5.0, std::log10(static_cast<double>(merged.count()))));
      std::string name = aggregate ? g.key.host : Member(g.key, with_target);
      if (!g.key.sweep.empty()) name += " " + g.key.sweep;
      if (g.rows.size() > 1) name += fmt::format(" ({} runs)", g.rows.size());
      percentiles.series.emplace_back();
      cdf.series.emplace_back();
      AddLatencySeries(name, merged, &percentiles.series.back(), &cdf.series.back());
    }
    AddNinesTicks(top, &percentiles.x);
    out += Figure(LineChartSvg(percentiles));
    out += Figure(LineChartSvg(cdf));
  }
  return out;
}

std::string TimeSeriesCharts(const RunRecord& run) {
  int repeat = 1;
  for (const PhaseOutcome& p : run.phases) repeat = std::max(repeat, p.plan.repetition + 1);
  std::string out;
  for (size_t index = 0; index < run.phases.size(); ++index) {
    const PhaseOutcome& phase = run.phases[index];
    // A command's figure is its wall time: a rate over time says nothing about it.
    const WorkloadKind* kind = KindOf(phase.plan.spec);
    if (kind != nullptr && (kind->seconds != nullptr || kind->blended_totals)) continue;
    bool moves_bytes = false;
    for (const HostOutcome& h : phase.hosts) {
      if (h.result && h.result->bytes() > 0) moves_bytes = true;
    }
    Chart chart;
    chart.title =
        fmt::format("Phase {}/{} {}", index + 1, run.phases.size(), PhasePlace(phase, repeat));
    chart.x.title = "seconds into the timed region";
    chart.y.title = moves_bytes ? "MiB/s" : "IOPS (operations/s)";
    for (const HostOutcome& h : phase.hosts) {
      stormark::v1::PhaseResult packed;
      const auto& samples = OwnSeries(h, &packed);
      if (samples.empty()) continue;
      ChartSeries series{h.host, {}};
      for (int i = 0; i < samples.size(); ++i) {
        const auto& s = samples[i];
        if (s.length_nanos() <= 0) continue;
        // The last interval is whatever was left of the run: a rate over a few milliseconds
        // would plot as a plunge that never happened. It is left out when under half the
        // interval before it.
        if (i > 0 && i + 1 == samples.size() &&
            2 * s.length_nanos() < samples[i - 1].length_nanos()) {
          continue;
        }
        const double length = static_cast<double>(s.length_nanos()) / 1e9;
        const double end = static_cast<double>(s.offset_nanos() + s.length_nanos()) / 1e9;
        const double rate = moves_bytes ? static_cast<double>(s.bytes()) / length / kMiB
                                        : static_cast<double>(s.ops()) / length;
        series.points.push_back(
            {end, rate, std::nullopt, std::nullopt,
             fmt::format("{}: {:.1f} {} from {} to {}", h.host, rate,
                         moves_bytes ? "MiB/s" : "IOPS", Seconds(end - length), Seconds(end))});
      }
      // A line needs two points at least: with one, the phase was over before there was a
      // curve, and its figure is in the tables already.
      if (series.points.size() >= 2) chart.series.push_back(std::move(series));
    }
    if (chart.series.empty()) continue;
    out += Figure(LineChartSvg(chart));
  }
  return out;
}

std::string SweepCharts(const RunRecord& run) {
  std::vector<std::string> axes;
  for (const PhaseOutcome& p : run.phases) {
    for (const auto& [axis, value] : p.plan.sweep_point) IndexOf(&axes, axis);
  }
  if (axes.empty()) return "";
  const bool with_target = TargetsMatter(run);
  std::string out;
  for (const std::string& phase : PhaseNames(run)) {
    if (Blended(PhaseKind(run, phase))) continue;  // A command's seconds are drawn; those not.
    for (const std::string& axis : axes) {
      std::vector<std::string> values, lines;
      // values of the metric, by line and by value of the axis
      std::map<std::pair<size_t, size_t>, std::vector<double>> cells;
      bool seconds = false;
      for (const PhaseOutcome& p : run.phases) {
        if (p.plan.name != phase) continue;
        const WorkloadKind* kind = KindOf(p.plan.spec);
        seconds = kind != nullptr && kind->seconds != nullptr;
        const auto [value, others] = AxisValue(p.plan.sweep_point, axis);
        if (value.empty()) continue;
        const size_t x = IndexOf(&values, value);
        for (const HostOutcome& h : p.hosts) {
          const std::string member = Member({phase, "", h.host, h.target}, with_target);
          const size_t line = IndexOf(&lines, member + others);
          if (auto metric = CellMetric(p.plan, h)) cells[{line, x}].push_back(*metric);
        }
      }
      Chart chart;
      const std::string unit = seconds ? "wall seconds" : "MiB/s";
      chart.title = fmt::format("{}: {} against {}", phase, unit, axis);
      chart.x.title = axis;
      chart.x.categories = values;
      chart.y.title = seconds ? "wall seconds (lower is better)" : "MiB/s";
      for (size_t line = 0; line < lines.size(); ++line) {
        ChartSeries series{lines[line], {}};
        for (size_t x = 0; x < values.size(); ++x) {
          auto it = cells.find({line, x});
          if (it == cells.end()) continue;
          const Spread spread = SpreadOf(it->second);
          std::string figure = fmt::format("{:.4g}", spread.median);
          if (spread.count > 1) {
            figure += fmt::format(" [{:.4g}-{:.4g}]", spread.min, spread.max);
          }
          series.points.push_back(
              SpreadPoint(static_cast<double>(x), spread,
                          fmt::format("{} {}={}: {} {} over {} run{}", lines[line], axis, values[x],
                                      figure, unit, spread.count, spread.count == 1 ? "" : "s")));
        }
        chart.series.push_back(std::move(series));
      }
      out += Figure(LineChartSvg(chart));
    }
  }
  return out;
}

}  // namespace stormark::controller
