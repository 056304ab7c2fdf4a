#include "controller/report/html/chart_parts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "common/strings.h"
#include "common/units.h"
#include "fmt/format.h"

namespace stormark::controller::chart_parts {

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

const WorkloadKind* PhaseKind(const RunRecord& run, const std::string& phase) {
  for (const PhaseOutcome& p : run.phases) {
    if (p.plan.name == phase) return KindOf(p.plan.spec);
  }
  return nullptr;
}

bool Blended(const WorkloadKind* kind) { return kind != nullptr && kind->blended_totals; }

bool RatesMeanSomething(const RunRecord& run, const std::string& phase) {
  const WorkloadKind* kind = PhaseKind(run, phase);
  return kind == nullptr || (kind->seconds == nullptr && !kind->blended_totals);
}

std::pair<std::string, std::string> AxisValue(const SweepPoint& point, const std::string& axis) {
  std::string value, others;
  for (const auto& [key, v] : point) {
    if (key == axis) {
      value = v;
    } else {
      others += fmt::format(" {}={}", key, v);
    }
  }
  return {value, others};
}

void AddNinesTicks(double top, ChartAxis* x) {
  for (const auto& [p, label] :
       {std::pair{50.0, "50"}, std::pair{90.0, "90"}, std::pair{99.0, "99"},
        std::pair{99.9, "99.9"}, std::pair{99.99, "99.99"}, std::pair{99.999, "99.999"}}) {
    if (Nines(p) <= top + 1e-9) x->ticks.emplace_back(Nines(p), label);
  }
}

std::pair<Chart, Chart> LatencyChartFrames(const std::string& phase) {
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
  return {std::move(percentiles), std::move(cdf)};
}

}  // namespace stormark::controller::chart_parts
