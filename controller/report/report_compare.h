// Two runs side by side (`stormark results compare A B`): for each phase, sweep point, host
// and target, each metric's median and spread in A and in B, the ratio B/A, and whether the
// difference is beyond the noise.
//
// The noise rule: with at least two successful repetitions on both sides, a difference is
// within noise when the min-max ranges of the two sides overlap, and otherwise B is better or
// worse (in the metric's own direction: higher MiB/s, lower latency). With a single
// repetition on either side there is no measure of noise, and the verdict says so instead of
// guessing. All functions are pure.
#ifndef STORMARK_CONTROLLER_REPORT_REPORT_COMPARE_H_
#define STORMARK_CONTROLLER_REPORT_REPORT_COMPARE_H_

#include <optional>
#include <string>
#include <vector>

#include "controller/report/host_groups.h"
#include "controller/report/repetitions.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

enum class Verdict {
  kWithinNoise,   // the ranges overlap
  kBetter,        // B's range lies wholly on the good side of A's
  kWorse,         // B's range lies wholly on the bad side of A's
  kNoiseUnknown,  // a single repetition on one side or both
  kMissing,       // no figure on one side
};

// The noise rule above, for one metric.
Verdict Judge(const Spread& a, const Spread& b, bool higher_is_better);
// "within noise", "B better", "B worse", "noise unknown", "-".
std::string VerdictText(Verdict verdict);

struct MetricComparison {
  const Metric* metric;
  Spread a, b;
  // median(B) / median(A); unset when either is missing or A is 0.
  std::optional<double> ratio;
  Verdict verdict;
};

struct ComparisonRow {
  SeriesKey key;
  // The all-hosts row (Repetitions::aggregate), not a host's.
  bool aggregate = false;
  // The repetitions on each side (0: the row is only in the other run), and how many did not
  // succeed.
  size_t runs_a = 0, runs_b = 0;
  int failed_a = 0, failed_b = 0;
  // Figures from repetitions with notes (see Repetitions::qualified).
  bool qualified_a = false, qualified_b = false;
  // All-hosts rows with repetitions whose validity verdict is INVALID (validity.h).
  int invalid_a = 0, invalid_b = 0;
  std::vector<MetricComparison> metrics;  // metrics with a figure on at least one side
};

// Rows in A's order, then the rows only B has. With `aggregates`, phases with several hosts
// also get their all-hosts row.
std::vector<ComparisonRow> CompareRuns(const RunRecord& a, const RunRecord& b,
                                       bool aggregates = true);

// The phases whose work differs between A and B (same name and sweep point, another
// description: "stream write 4 GiB" against "256 MiB"), as lines for the top of a
// comparison; "" when every phase both ran did the same work.
std::string PlanDifferences(const RunRecord& a, const RunRecord& b);

// Whether a host's row shows a change: a figure better or worse beyond the noise, a side
// without the row, or repetitions that failed.
bool Changed(const ComparisonRow& row);

// Host rows of a phase and sweep point printed at most, past view.collapse_above hosts.
inline constexpr size_t kChangedRowsShown = 16;

// The comparison as text: a header naming both runs, the work that differs between them,
// the noise rule, then one table. Past view.collapse_above hosts, and without
// view.all_hosts, the table holds the all-hosts rows and the hosts that changed (Changed: the
// worse first, at most kChangedRowsShown per phase and point), and under it, for each phase
// and point, how many hosts were within noise, of unknown noise and changed, and the spread of
// a host's B/A (min, p50, max); the settings that differ between A and B are grouped by text.
std::string FormatComparison(const RunRecord& a, const RunRecord& b,
                             const std::vector<ComparisonRow>& rows, const TableView& view = {});

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_REPORT_COMPARE_H_
