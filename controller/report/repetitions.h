// The figures of a run gathered across repetitions: for each phase, sweep point, host and
// target, the summary row of every repetition, and the median and spread (min to max) of each
// metric over them. The comparison reports (`results compare`, `--baseline`) print these.
//
// Percentiles are taken per repetition from that repetition's histogram; across repetitions
// they are only ever ranked (median, min, max), never averaged. All functions are pure.
#ifndef STORMARK_CONTROLLER_REPORT_REPETITIONS_H_
#define STORMARK_CONTROLLER_REPORT_REPETITIONS_H_

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/run/run_record.h"
#include "controller/report/summary.h"

namespace stormark::controller {

// One figure read off a summary row.
struct Metric {
  std::string_view name;  // column header: "MiB/s", "p99 lat"
  bool higher_is_better;
  // The figure, or nullopt where it means nothing (no bytes moved, no latency recorded).
  std::optional<double> (*value)(const RowSummary& row);
  // The figure as a table shows it: "341.5", "4.44 ms".
  std::string (*format)(double value);
};

// MiB/s, ops/s, p50 lat, p99 lat, max lat, CPU%, elapsed.
const std::vector<Metric>& Metrics();
// The metric named `name`; nullptr when there is none.
const Metric* FindMetric(std::string_view name);

// The values of one metric over repetitions.
struct Spread {
  size_t count = 0;  // 0 when no repetition had the figure
  double median = 0;
  double min = 0;
  double max = 0;
};
Spread SpreadOf(std::vector<double> values);

// "341.5" for one value, "341.5 [338.0-345.2]" for several (median [min-max]); "-" for none.
// A figure of `qualified` repetitions is marked " *", as in the phase tables.
std::string FormatSpread(const Metric& metric, const Spread& spread, bool qualified = false);

// The note below a table whose figures may carry the mark.
inline constexpr char kQualifiedNote[] =
    "* from a repetition with notes (too fast to time, possibly cache-dominated, ...): read "
    "them with 'stormark results show RUN'";

// Where a row of a comparison sits.
struct SeriesKey {
  std::string phase;  // the phase's name
  std::string sweep;  // DescribeSweepPoint, "" outside a sweep
  std::string host;   // a host, or "all hosts" / "mean of hosts" for the aggregate row
  std::string target;

  auto operator<=>(const SeriesKey&) const = default;
};

struct Repetitions {
  SeriesKey key;
  // "stream write 1 GiB, bs 1 MiB, fdatasync", from the first repetition.
  std::string description;
  // The all-hosts row ("all hosts" or "mean of hosts"), not a host's. A host that failed
  // before its target was known has an empty target too, and is still a host.
  bool aggregate = false;
  // The rows of the repetitions that succeeded, in run order.
  std::vector<RowSummary> rows;
  // Repetitions of this host that did not succeed.
  int failed = 0;
  // Those of them aborted after doing work (IsPartial), with their figures until the abort.
  std::vector<RowSummary> partial;
  // Some succeeded repetition carries notes (too fast to time, possibly cache-dominated, ...),
  // so its figures are not to be read alone.
  bool qualified = false;
  // An all-hosts row of which some repetition's validity verdict is INVALID (validity.h):
  // labelled "INVALID" wherever it is shown.
  int invalid = 0;

  // The metric over the succeeded repetitions.
  Spread Of(const Metric& metric) const;
  // The metric over the partial ones, for a row that has no succeeded repetition to show.
  Spread PartialOf(const Metric& metric) const;
};

// Every phase, sweep point and host of `run`, in the order they first ran. With
// `aggregates`, a phase with more than one host also gets its all-hosts row.
std::vector<Repetitions> GroupRepetitions(const RunRecord& run, bool aggregates);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_REPETITIONS_H_
