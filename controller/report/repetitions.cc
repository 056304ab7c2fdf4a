#include "controller/report/repetitions.h"

#include <algorithm>
#include <map>

#include "common/units.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::optional<double> Positive(double value) {
  return value > 0 ? std::optional<double>(value) : std::nullopt;
}

std::optional<double> LatencyAt(const RowSummary& row, double percentile) {
  if (row.latency.count() == 0) return std::nullopt;
  return static_cast<double>(percentile >= 100 ? row.latency.max()
                                               : row.latency.Percentile(percentile));
}

std::string OneDecimal(double value) { return fmt::format("{:.1f}", value); }
std::string Duration(double nanos) { return common::FormatDurationNanos(nanos); }
std::string Seconds(double seconds) { return fmt::format("{:.2f} s", seconds); }

}  // namespace

const std::vector<Metric>& Metrics() {
  static const std::vector<Metric> kMetrics = {
      {"MiB/s", true, [](const RowSummary& r) { return Positive(r.bytes_per_second / kMiB); },
       OneDecimal},
      {"ops/s", true,
       [](const RowSummary& r) {
         return r.elapsed_seconds > 0 ? Positive(static_cast<double>(r.ops) / r.elapsed_seconds)
                                      : std::nullopt;
       },
       OneDecimal},
      {"p50 lat", false, [](const RowSummary& r) { return LatencyAt(r, 50); }, Duration},
      {"p99 lat", false, [](const RowSummary& r) { return LatencyAt(r, 99); }, Duration},
      {"max lat", false, [](const RowSummary& r) { return LatencyAt(r, 100); }, Duration},
      {"CPU%", false, [](const RowSummary& r) { return std::optional<double>(r.cpu_percent); },
       OneDecimal},
      {"elapsed", false, [](const RowSummary& r) { return Positive(r.elapsed_seconds); }, Seconds},
  };
  return kMetrics;
}

const Metric* FindMetric(std::string_view name) {
  for (const Metric& metric : Metrics()) {
    if (metric.name == name) return &metric;
  }
  return nullptr;
}

Spread SpreadOf(std::vector<double> values) {
  Spread spread;
  spread.count = values.size();
  if (values.empty()) return spread;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  spread.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  spread.min = values.front();
  spread.max = values.back();
  return spread;
}

std::string FormatSpread(const Metric& metric, const Spread& spread, bool qualified) {
  if (spread.count == 0) return "-";
  const std::string mark = qualified ? " *" : "";
  if (spread.count == 1) return metric.format(spread.median) + mark;
  return fmt::format("{} [{}-{}]{}", metric.format(spread.median), metric.format(spread.min),
                     metric.format(spread.max), mark);
}

namespace {

Spread SpreadOver(const std::vector<RowSummary>& rows, const Metric& metric) {
  std::vector<double> values;
  for (const RowSummary& row : rows) {
    if (auto value = metric.value(row)) values.push_back(*value);
  }
  return SpreadOf(std::move(values));
}

}  // namespace

Spread Repetitions::Of(const Metric& metric) const { return SpreadOver(rows, metric); }

Spread Repetitions::PartialOf(const Metric& metric) const { return SpreadOver(partial, metric); }

std::vector<Repetitions> GroupRepetitions(const RunRecord& run, bool aggregates) {
  struct Entry {
    SeriesKey key;
    std::string description;
    RowSummary row;
    bool aggregate = false;
  };
  std::vector<Entry> entries;
  for (const PhaseOutcome& phase : run.phases) {
    const PhaseSummary summary = Summarize(phase);
    const std::string sweep = DescribeSweepPoint(phase.plan.sweep_point);
    const std::string description = phase.plan.Describe();
    for (const RowSummary& row : summary.rows) {
      entries.push_back({{phase.plan.name, sweep, row.host, row.target}, description, row, false});
    }
    if (aggregates && summary.rows.size() > 1 && summary.all_hosts) {
      entries.push_back({{phase.plan.name, sweep, summary.all_hosts->host, ""},
                         description,
                         *summary.all_hosts,
                         true});
    }
  }
  // A host that failed before its target was resolved has no target: it counts as a failed
  // repetition of the same host's row in the other repetitions.
  for (Entry& entry : entries) {
    if (!entry.key.target.empty()) continue;
    for (const Entry& other : entries) {
      if (!other.key.target.empty() && other.key.phase == entry.key.phase &&
          other.key.sweep == entry.key.sweep && other.key.host == entry.key.host) {
        entry.key.target = other.key.target;
        break;
      }
    }
  }

  std::vector<Repetitions> groups;
  std::map<SeriesKey, size_t> index;  // Into groups, which keep the order of first appearance.
  for (const Entry& entry : entries) {
    auto [it, added] = index.try_emplace(entry.key, groups.size());
    if (added) {
      groups.push_back({entry.key, entry.description, entry.aggregate, {}, 0, {}, false, 0});
    }
    Repetitions& group = groups[it->second];
    if (entry.row.status == "succeeded") {
      group.qualified = group.qualified || !entry.row.warnings.empty();
      if (entry.row.invalid) ++group.invalid;
      group.rows.push_back(entry.row);
    } else {
      ++group.failed;
      if (IsPartial(entry.row)) group.partial.push_back(entry.row);
    }
  }
  return groups;
}

}  // namespace stormark::controller
