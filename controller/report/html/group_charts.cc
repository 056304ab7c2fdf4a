#include "controller/report/html/group_charts.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "controller/fleet/packed_series.h"
#include "controller/report/html/chart_parts.h"
#include "controller/report/html/svg_chart.h"
#include "controller/report/repetitions.h"
#include "controller/report/report_table.h"
#include "controller/report/summary.h"
#include "controller/report/sweep_table.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {

using namespace chart_parts;  // NOLINT: the parts every chart section draws with.

namespace {

std::string Hosts(size_t n) { return fmt::format("{} host{}", n, n == 1 ? "" : "s"); }

// The hosts' figures as a point: the median host, the whisker from the lowest to the highest.
ChartPoint HostsPoint(double x, std::vector<double> values, const std::string& what,
                      const std::string& unit) {
  const size_t n = values.size();
  const Spread spread = SpreadOf(std::move(values));
  return SpreadPoint(
      x, spread,
      n == 1 ? fmt::format("{}: {:.4g} {} (1 host)", what, spread.median, unit)
             : fmt::format("{}: median host {:.4g} {}, lowest {:.4g}, highest {:.4g}, {} hosts",
                           what, spread.median, unit, spread.min, spread.max, n));
}

// A host's rate in each interval of a time series of groups, where it ran for at least half
// of the interval; and every host's work summed.
struct Intervals {
  int64_t t0 = 0, t1 = 0, width = 0;
  size_t count = 0;

  int64_t Length(size_t k) const {
    return std::max<int64_t>(1, std::min(width, t1 - t0 - static_cast<int64_t>(k) * width));
  }
  double EndSeconds(size_t k) const {
    return static_cast<double>(static_cast<int64_t>(k) * width + Length(k)) / 1e9;
  }
};

// Adds what one host's samples did to each interval: `amount` its work (bytes or ops), and
// `covered` how long its samples covered of the interval.
void AddSamples(const Intervals& in, int64_t host_start,
                const google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>& samples,
                bool bytes, std::vector<double>* amount, std::vector<double>* covered) {
  amount->assign(in.count, 0);
  covered->assign(in.count, 0);
  const int64_t span = in.t1 - in.t0;
  for (const auto& s : samples) {
    const int64_t length = s.length_nanos();
    // A sample outside the phase (an agent's bug, or a hostile one) is no part of its curve, and
    // its sums would overflow.
    if (length <= 0 || length > span || s.offset_nanos() < 0 || s.offset_nanos() > span) continue;
    const int64_t begin = host_start + s.offset_nanos() - in.t0;
    const int64_t end = begin + length;
    const double work = static_cast<double>(bytes ? s.bytes() : s.ops());
    for (int64_t k = std::max<int64_t>(0, begin / in.width);
         k < static_cast<int64_t>(in.count) && k * in.width < end; ++k) {
      const int64_t overlap = std::min(end, (k + 1) * in.width) - std::max(begin, k * in.width);
      if (overlap <= 0) continue;
      (*amount)[k] += work * static_cast<double>(overlap) / static_cast<double>(length);
      (*covered)[k] += static_cast<double>(overlap);
    }
  }
}

}  // namespace

std::optional<size_t> FleetGroups::Of(const std::string& phase, const std::string& host) const {
  const auto it = of_host.find({phase, host});
  if (it == of_host.end()) return std::nullopt;
  return it->second;
}

FleetGroups GroupFleet(const RunRecord& run, const TableView& view) {
  FleetGroups groups;
  for (const PhaseOutcome& phase : run.phases) {
    const PhaseSummary summary = Summarize(phase);
    std::vector<size_t>& of = groups.of.emplace_back(phase.hosts.size(), 0);
    std::vector<Outlier>& outliers = groups.outliers.emplace_back();
    for (const HostGroup& group : GroupHosts(summary, view)) {
      const size_t g = IndexOf(&groups.names, group.name);
      for (const size_t row : group.rows) {
        if (row < of.size()) of[row] = g;
        groups.of_host.emplace(std::pair{phase.plan.name, summary.rows[row].host}, g);
      }
      for (Outlier& o : Outliers(phase, summary, group)) outliers.push_back(std::move(o));
    }
    std::sort(outliers.begin(), outliers.end(),
              [](const Outlier& a, const Outlier& b) { return a.row < b.row; });
  }
  return groups;
}

std::string GroupThroughputCharts(const RunRecord& run, const FleetGroups& groups) {
  const std::vector<Repetitions> rows = GroupRepetitions(run, /*aggregates=*/false);
  std::string out;
  for (const std::string& phase : PhaseNames(run)) {
    if (!RatesMeanSomething(run, phase)) continue;
    std::vector<std::string> sweeps;
    for (const Repetitions& r : rows) {
      if (r.key.phase == phase) IndexOf(&sweeps, r.key.sweep);
    }
    const bool swept = sweeps.size() > 1 || (!sweeps.empty() && !sweeps[0].empty());
    const auto [labels, axis_title] = CompactPoints(sweeps);
    for (const auto& [metric_name, title] :
         {std::pair{"MiB/s", "throughput, MiB/s"}, std::pair{"ops/s", "IOPS (operations/s)"}}) {
      const Metric& metric = *FindMetric(metric_name);
      // Each host's median over repetitions, by group and sweep point.
      std::map<std::pair<size_t, size_t>, std::vector<double>> cells;
      for (const Repetitions& r : rows) {
        if (r.key.phase != phase) continue;
        const std::optional<size_t> g = groups.Of(phase, r.key.host);
        const Spread spread = r.Of(metric);
        if (!g || spread.count == 0) continue;
        cells[{*g, IndexOf(&sweeps, r.key.sweep)}].push_back(spread.median);
      }
      if (cells.empty()) continue;
      Chart chart;
      chart.title = fmt::format("{}: {} of a host, by group", phase, title);
      chart.x.title = swept ? axis_title : "";
      chart.x.categories = swept ? labels : std::vector<std::string>{phase};
      chart.y.title = title;
      std::map<size_t, size_t> series_of;  // group -> series
      for (auto& [at, values] : cells) {
        const auto [g, x] = at;
        auto [it, added] = series_of.emplace(g, chart.series.size());
        if (added) chart.series.push_back({groups.names[g], {}});
        const std::string what = fmt::format("{}{}{}", groups.names[g], swept ? " " : "",
                                             swept ? sweeps[x] : std::string());
        chart.series[it->second].points.push_back(
            HostsPoint(static_cast<double>(x), std::move(values), what, metric_name));
      }
      out += Figure(BarChartSvg(chart));
    }
  }
  return out;
}

std::string GroupLatencyCharts(const RunRecord& run, const FleetGroups& groups) {
  const std::vector<Repetitions> rows = GroupRepetitions(run, /*aggregates=*/true);
  std::string out;
  for (const std::string& phase : PhaseNames(run)) {
    if (!RatesMeanSomething(run, phase)) continue;
    auto [percentiles, cdf] = LatencyChartFrames(phase);
    // The hosts flagged for their p99 latency in some run of the phase, with why.
    std::map<std::string, std::string> flagged;
    for (size_t p = 0; p < run.phases.size(); ++p) {
      if (run.phases[p].plan.name != phase) continue;
      for (const Outlier& o : groups.outliers[p]) {
        if (o.why.find("p99 lat") == std::string::npos || flagged.size() >= kHostsDrawn) continue;
        flagged.emplace(run.phases[p].hosts[o.row].host, o.why);
      }
    }
    std::set<size_t> in_phase;
    for (const auto& [at, g] : groups.of_host) {
      if (at.first == phase) in_phase.insert(g);
    }
    const size_t groups_in_phase = in_phase.size();
    // Merged histograms: each group's (and sweep point's), the all-hosts rows', the flagged
    // hosts'; in the order first seen.
    std::vector<std::string> names;
    std::vector<common::LatencyHistogram> merged;
    std::vector<size_t> hosts;
    const auto line = [&](const std::string& name) -> size_t {
      const size_t i = IndexOf(&names, name);
      if (merged.size() < names.size()) {
        merged.resize(names.size());
        hosts.resize(names.size());
      }
      return i;
    };
    for (const Repetitions& r : rows) {
      if (r.key.phase != phase || r.rows.empty()) continue;
      std::vector<size_t> into;
      if (r.aggregate) {
        // One line per group and point is enough; with one group, the group is all hosts.
        if (!r.key.sweep.empty() || groups_in_phase < 2) continue;
        into.push_back(line(r.key.host));
      } else {
        const std::optional<size_t> g = groups.Of(phase, r.key.host);
        if (g) {
          into.push_back(line(groups.names[*g] + (r.key.sweep.empty() ? "" : " " + r.key.sweep)));
        }
        if (const auto f = flagged.find(r.key.host); f != flagged.end()) {
          into.push_back(line(fmt::format(
              "{}{} ({})", r.key.host, r.key.sweep.empty() ? "" : " " + r.key.sweep, f->second)));
        }
      }
      for (const size_t i : into) {
        for (const RowSummary& row : r.rows) merged[i].Merge(row.latency);
        ++hosts[i];
      }
    }
    double top = Nines(90);
    for (size_t i = 0; i < names.size(); ++i) {
      if (merged[i].count() == 0) continue;
      top = std::max(top, std::min(5.0, std::log10(static_cast<double>(merged[i].count()))));
      const bool group = i < names.size() && hosts[i] > 1;
      const std::string name = group ? fmt::format("{} ({})", names[i], Hosts(hosts[i])) : names[i];
      percentiles.series.emplace_back();
      cdf.series.emplace_back();
      AddLatencySeries(name, merged[i], &percentiles.series.back(), &cdf.series.back());
    }
    AddNinesTicks(top, &percentiles.x);
    out += Figure(LineChartSvg(percentiles));
    out += Figure(LineChartSvg(cdf));
  }
  return out;
}

std::string GroupTimeSeriesCharts(const RunRecord& run, const FleetGroups& groups) {
  int repeat = 1;
  for (const PhaseOutcome& p : run.phases) repeat = std::max(repeat, p.plan.repetition + 1);
  std::string out;
  for (size_t index = 0; index < run.phases.size(); ++index) {
    const PhaseOutcome& phase = run.phases[index];
    const WorkloadKind* kind = KindOf(phase.plan.spec);
    if (kind != nullptr && (kind->seconds != nullptr || kind->blended_totals)) continue;
    bool moves_bytes = false;
    Intervals in;
    in.t0 = INT64_MAX;
    in.t1 = INT64_MIN;
    for (const HostOutcome& h : phase.hosts) {
      if (!h.succeeded() || h.result->start_unix_nanos() == 0) continue;
      const int64_t start = h.result->start_unix_nanos() - h.clock.offset_nanos;
      in.t0 = std::min(in.t0, start);
      in.t1 = std::max(in.t1, start + h.result->elapsed_nanos());
      moves_bytes = moves_bytes || h.result->bytes() > 0;
    }
    if (in.t1 <= in.t0) continue;
    // Whole samples per interval, and no more than kMaxIntervals of them. A sample is as long
    // as the first host's first (the agents sample at the interval the phase asked for).
    int64_t sample = 0;
    for (const HostOutcome& h : phase.hosts) {
      stormark::v1::PhaseResult packed;
      const auto& samples = OwnSeries(h, &packed);
      if (!samples.empty() && samples[0].length_nanos() > 0 &&
          samples[0].length_nanos() <= in.t1 - in.t0) {
        sample = samples[0].length_nanos();
        break;
      }
    }
    if (sample == 0) continue;
    const int64_t span = in.t1 - in.t0;
    in.width = std::max<int64_t>(sample, (span + kMaxIntervals - 1) / kMaxIntervals);
    in.width = (in.width + sample - 1) / sample * sample;
    // A last interval under half the others is what was left of the run: a rate over it would
    // plot as a plunge that never happened (as report_charts.h leaves out a host's).
    in.count = static_cast<size_t>(span / in.width + (2 * (span % in.width) >= in.width ? 1 : 0));

    // By group: the work summed per interval, the hosts' rates per interval, the hosts.
    std::vector<std::vector<double>> sums(groups.names.size());
    std::vector<std::vector<std::vector<double>>> rates(groups.names.size());
    std::vector<size_t> members(groups.names.size(), 0);
    // The hosts that stand out, drawn on their own.
    std::map<size_t, std::string> drawn;
    for (const Outlier& o : groups.outliers[index]) {
      if (drawn.size() < kHostsDrawn) drawn.emplace(o.row, o.why);
    }
    std::vector<ChartSeries> own;
    std::vector<double> amount, covered;
    const double unit = moves_bytes ? kMiB : 1;
    for (size_t h = 0; h < phase.hosts.size(); ++h) {
      const HostOutcome& host = phase.hosts[h];
      if (!host.succeeded() || host.result->start_unix_nanos() == 0) continue;
      stormark::v1::PhaseResult packed;
      const auto& samples = OwnSeries(host, &packed);
      if (samples.empty()) continue;
      AddSamples(in, host.result->start_unix_nanos() - host.clock.offset_nanos, samples,
                 moves_bytes, &amount, &covered);
      const size_t g = groups.of[index][h];
      if (sums[g].empty()) {
        sums[g].assign(in.count, 0);
        rates[g].resize(in.count);
      }
      ++members[g];
      const auto it = drawn.find(h);
      if (it != drawn.end()) own.push_back({fmt::format("{} ({})", host.host, it->second), {}});
      for (size_t k = 0; k < in.count; ++k) {
        sums[g][k] += amount[k];
        if (2 * covered[k] < static_cast<double>(in.Length(k))) continue;
        const double rate = amount[k] / (covered[k] / 1e9) / unit;
        rates[g][k].push_back(rate);
        if (it != drawn.end()) {
          own.back().points.push_back(
              {in.EndSeconds(k), rate, std::nullopt, std::nullopt,
               fmt::format("{}: {:.4g} {} until {}", host.host, rate,
                           moves_bytes ? "MiB/s" : "IOPS", Seconds(in.EndSeconds(k)))});
        }
      }
    }
    const std::string rate_unit = moves_bytes ? "MiB/s" : "IOPS";
    const std::string place =
        fmt::format("Phase {}/{} {}", index + 1, run.phases.size(), PhasePlace(phase, repeat));
    const std::string x_title =
        fmt::format("seconds since the first host started (controller's clock; intervals of {})",
                    Seconds(static_cast<double>(in.width) / 1e9));
    Chart summed, spread;
    summed.title = fmt::format("{}: the hosts' {} summed", place, rate_unit);
    spread.title = fmt::format("{}: one host's {}, median and range", place, rate_unit);
    summed.x.title = spread.x.title = x_title;
    summed.y.title = fmt::format("{} (the group's hosts together)", rate_unit);
    spread.y.title = fmt::format("{} (one host)", rate_unit);
    for (size_t g = 0; g < groups.names.size(); ++g) {
      if (members[g] == 0) continue;
      const std::string name = fmt::format("{} ({})", groups.names[g], Hosts(members[g]));
      ChartSeries total{name, {}}, hosts{name, {}, /*band=*/true};
      for (size_t k = 0; k < in.count; ++k) {
        const double end = in.EndSeconds(k);
        const double from = end - static_cast<double>(in.Length(k)) / 1e9;
        const double rate = sums[g][k] / (static_cast<double>(in.Length(k)) / 1e9) / unit;
        total.points.push_back({end, rate, std::nullopt, std::nullopt,
                                fmt::format("{}, {} to {}: {:.4g} {} together", name, Seconds(from),
                                            Seconds(end), rate, rate_unit)});
        if (rates[g][k].empty()) continue;
        ChartPoint point = HostsPoint(
            end, std::move(rates[g][k]),
            fmt::format("{}, {} to {}", groups.names[g], Seconds(from), Seconds(end)), rate_unit);
        point.low = point.low.value_or(point.y);
        point.high = point.high.value_or(point.y);
        hosts.points.push_back(std::move(point));
      }
      summed.series.push_back(std::move(total));
      if (hosts.points.size() >= 2) spread.series.push_back(std::move(hosts));
    }
    for (ChartSeries& s : own) {
      if (s.points.size() >= 2) spread.series.push_back(std::move(s));
    }
    if (in.count < 2) continue;  // Over within one interval: the tables say it all.
    out += Figure(LineChartSvg(summed));
    out += Figure(LineChartSvg(spread));
  }
  return out;
}

std::string GroupSweepCharts(const RunRecord& run, const FleetGroups& groups) {
  std::vector<std::string> axes;
  for (const PhaseOutcome& p : run.phases) {
    for (const auto& [axis, value] : p.plan.sweep_point) IndexOf(&axes, axis);
  }
  if (axes.empty()) return "";
  std::string out;
  for (const std::string& phase : PhaseNames(run)) {
    if (Blended(PhaseKind(run, phase))) continue;
    for (const std::string& axis : axes) {
      std::vector<std::string> values, lines;
      // Each host's values of the metric over repetitions, by line and value of the axis.
      std::map<std::pair<size_t, size_t>, std::map<std::string, std::vector<double>>> cells;
      bool seconds = false;
      for (const PhaseOutcome& p : run.phases) {
        if (p.plan.name != phase) continue;
        const WorkloadKind* kind = KindOf(p.plan.spec);
        seconds = kind != nullptr && kind->seconds != nullptr;
        const auto [value, others] = AxisValue(p.plan.sweep_point, axis);
        if (value.empty()) continue;
        const size_t x = IndexOf(&values, value);
        for (const HostOutcome& h : p.hosts) {
          const std::optional<size_t> g = groups.Of(phase, h.host);
          if (!g) continue;
          const size_t line = IndexOf(&lines, groups.names[*g] + others);
          if (auto metric = CellMetric(p.plan, h)) cells[{line, x}][h.host].push_back(*metric);
        }
      }
      const std::string unit = seconds ? "wall seconds" : "MiB/s";
      Chart chart;
      chart.title = fmt::format("{}: {} of a host against {}, by group", phase, unit, axis);
      chart.x.title = axis;
      chart.x.categories = values;
      chart.y.title = seconds ? "wall seconds (lower is better)" : "MiB/s";
      for (size_t line = 0; line < lines.size(); ++line) {
        ChartSeries series{lines[line], {}};
        for (size_t x = 0; x < values.size(); ++x) {
          auto it = cells.find({line, x});
          if (it == cells.end()) continue;
          std::vector<double> medians;
          for (auto& [host, v] : it->second) medians.push_back(SpreadOf(std::move(v)).median);
          series.points.push_back(HostsPoint(static_cast<double>(x), std::move(medians),
                                             fmt::format("{} {}={}", lines[line], axis, values[x]),
                                             unit));
        }
        chart.series.push_back(std::move(series));
      }
      out += Figure(LineChartSvg(chart));
    }
  }
  return out;
}

}  // namespace stormark::controller
