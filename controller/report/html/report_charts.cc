#include "controller/report/html/report_charts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

#include "common/strings.h"
#include "common/units.h"
#include "controller/fleet/packed_series.h"
#include "controller/report/html/svg_chart.h"
#include "controller/report/repetitions.h"
#include "controller/report/report_table.h"
#include "controller/report/sweep_table.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

size_t IndexOf(std::vector<std::string>* list, const std::string& value) {
  auto it = std::find(list->begin(), list->end(), value);
  if (it != list->end()) return static_cast<size_t>(it - list->begin());
  list->push_back(value);
  return list->size() - 1;
}

std::vector<std::string> PhaseNames(const RunRecord& run) {
  std::vector<std::string> names;
  for (const PhaseOutcome& p : run.phases) IndexOf(&names, p.plan.name);
  return names;
}

// Hosts are named alone, unless one of them used several targets in the run.
bool TargetsMatter(const RunRecord& run) {
  std::map<std::string, std::string> target_of;
  for (const PhaseOutcome& p : run.phases) {
    for (const HostOutcome& h : p.hosts) {
      if (h.target.empty()) continue;
      auto [it, added] = target_of.emplace(h.host, h.target);
      if (!added && it->second != h.target) return true;
    }
  }
  return false;
}

std::string Member(const SeriesKey& key, bool with_target) {
  return with_target && !key.target.empty() ? key.host + " / " + key.target : key.host;
}

std::string Figure(const std::string& svg) {
  return svg.empty() ? "" : "<figure>" + svg + "</figure>\n";
}

std::string Seconds(double s) { return fmt::format("{:.4g} s", s); }
std::string Duration(double nanos) { return common::FormatDurationNanos(nanos); }

// "341.5 [338.0-345.2] over 3 runs": what a point's tooltip says about its figure.
std::string SpreadTip(const Metric& metric, const Spread& spread) {
  return fmt::format("{} {} over {} run{}", FormatSpread(metric, spread), metric.name, spread.count,
                     spread.count == 1 ? "" : "s");
}

ChartPoint SpreadPoint(double x, const Spread& spread, std::string tip) {
  ChartPoint point{x, spread.median, std::nullopt, std::nullopt, std::move(tip)};
  if (spread.count > 1) {
    point.low = spread.min;
    point.high = spread.max;
  }
  return point;
}

// Percentile p as a distance along a "nines" axis: 50 -> 0.3, 90 -> 1, 99 -> 2, 99.9 -> 3.
double Nines(double percentile) { return -std::log10(1 - percentile / 100); }

void AddLatencySeries(const std::string& name, const common::LatencyHistogram& h,
                      ChartSeries* percentiles, ChartSeries* cdf) {
  percentiles->name = cdf->name = name;
  const double top = std::min(5.0, std::log10(static_cast<double>(h.count())));
  for (double t = Nines(50); t <= top + 1e-9 || t == Nines(50); t += 0.05) {
    const double p = 100 * (1 - std::pow(10, -t));
    const double value = static_cast<double>(h.Percentile(p));
    percentiles->points.push_back({t, value, std::nullopt, std::nullopt,
                                   fmt::format("{}: p{:.5g} = {}", name, p, Duration(value))});
  }
  uint64_t seen = 0;
  double shown = -1;
  for (uint32_t i = 0; i < common::LatencyHistogram::kBucketCount && seen < h.count(); ++i) {
    const uint64_t count = h.BucketCount(i);
    if (count == 0) continue;
    seen += count;
    const double fraction = static_cast<double>(seen) / static_cast<double>(h.count());
    if (fraction - shown < 0.005 && seen < h.count()) continue;  // At most ~200 points.
    shown = fraction;
    const double upper = static_cast<double>(std::min(
        common::LatencyHistogram::BucketLowerBound(i) + common::LatencyHistogram::BucketWidth(i),
        std::max<uint64_t>(h.max(), 1)));
    cdf->points.push_back(
        {upper, fraction, std::nullopt, std::nullopt,
         fmt::format("{}: {:.4g}% at or below {}", name, 100 * fraction, Duration(upper))});
  }
}

// The sweep points as short category labels: only the values ("ext4 128" for "fs=ext4
// read_ahead_kb=128"), and the keys once, for the axis title ("fs, read_ahead_kb"). Points
// written otherwise are kept whole.
std::pair<std::vector<std::string>, std::string> CompactPoints(
    const std::vector<std::string>& points) {
  std::vector<std::string> labels, keys;
  for (const std::string& point : points) {
    std::string label;
    std::vector<std::string> these;
    for (std::string_view word : common::Split(point, ' ')) {
      const size_t eq = word.find('=');
      if (eq == std::string_view::npos) return {points, "sweep point"};
      these.emplace_back(word.substr(0, eq));
      if (!label.empty()) label += ' ';
      label += word.substr(eq + 1);
    }
    if (keys.empty()) keys = these;
    if (these != keys) return {points, "sweep point"};
    labels.push_back(label);
  }
  std::string title;
  for (const std::string& key : keys) {
    if (!title.empty()) title += ", ";
    title += key;
  }
  return {labels, "sweep point: " + title};
}

// The workload of the phase named `phase`, or nullptr.
const WorkloadKind* PhaseKind(const RunRecord& run, const std::string& phase) {
  for (const PhaseOutcome& p : run.phases) {
    if (p.plan.name == phase) return KindOf(p.plan.spec);
  }
  return nullptr;
}

// Whether the phase's totals mix tests of different kinds (bonnie's): no chart of them means
// anything, and its own table stands in for them.
bool Blended(const WorkloadKind* kind) { return kind != nullptr && kind->blended_totals; }

// Whether the phase's figures are rates and latencies a chart may compare: not a command's
// wall time, not bonnie's blended totals.
bool RatesMeanSomething(const RunRecord& run, const std::string& phase) {
  const WorkloadKind* kind = PhaseKind(run, phase);
  return kind == nullptr || (kind->seconds == nullptr && !kind->blended_totals);
}

}  // namespace

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
    Chart percentiles, cdf;
    percentiles.title = fmt::format("{}: latency by percentile", phase);
    percentiles.x.title = "percentile";
    percentiles.y = {"latency", true, false, Duration, {}, {}};
    cdf.title = fmt::format("{}: latency CDF", phase);
    cdf.x = {"latency", true, false, Duration, {}, {}};
    cdf.y = {"fraction of operations at or below",
             false,
             true,
             [](double v) { return fmt::format("{:.2g}", v); },
             {},
             {}};
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
    for (const auto& [p, label] :
         {std::pair{50.0, "50"}, std::pair{90.0, "90"}, std::pair{99.0, "99"},
          std::pair{99.9, "99.9"}, std::pair{99.99, "99.99"}, std::pair{99.999, "99.999"}}) {
      if (Nines(p) <= top + 1e-9) percentiles.x.ticks.emplace_back(Nines(p), label);
    }
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
        std::string value, others;
        for (const auto& [key, v] : p.plan.sweep_point) {
          if (key == axis) {
            value = v;
          } else {
            others += fmt::format(" {}={}", key, v);
          }
        }
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
