// The regression gate of CI labs (`stormark results compare --baseline RUN --fail-if-slower
// 10%`): every figure of the candidate run checked against the baseline run, per phase, sweep
// point, host and target, and the files CI systems read (JUnit XML, a Markdown summary).
//
// A check fails when the candidate is slower than the baseline by more than the threshold
// AND beyond the measured noise: with at least two repetitions on both sides, the ranges
// [min-max] must not overlap (report_compare.h's rule). With a single repetition on a side
// there is no noise to measure; the check is then judged on the threshold alone and says so.
// A check also fails when the candidate lacks a figure the baseline has, or when some of the
// candidate's repetitions of that host failed. Figures only the candidate has pass.
//
// "Slower" is in the metric's own direction: less MiB/s or ops/s, more latency or elapsed
// time. All functions are pure.
#ifndef STORMARK_CONTROLLER_REPORT_REPORT_GATE_H_
#define STORMARK_CONTROLLER_REPORT_REPORT_GATE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "controller/report/report_compare.h"

namespace stormark::controller {

// The metrics gated when none are named: the figures of speed. Not "max lat" (one sample,
// the noisiest figure there is) nor "CPU%" (not a speed).
inline constexpr std::string_view kDefaultGateMetrics[] = {"MiB/s", "ops/s", "p50 lat", "p99 lat",
                                                           "elapsed"};

struct GateOptions {
  // 0.10 for "10%".
  double threshold = 0.10;
  std::vector<const Metric*> metrics;
};

// "10%", "10" (percent) or "2.5%". INVALID_ARGUMENT for anything else, naming the flag.
common::StatusOr<double> ParseThreshold(std::string_view text);
// Metrics by name ("MiB/s", "p99 lat"); empty names give the default set.
common::StatusOr<std::vector<const Metric*>> GateMetrics(const std::vector<std::string>& names);

struct GateCheck {
  SeriesKey key;
  // Null for a validity check: the verdict of one run of a phase on several hosts, which
  // fails when it is INVALID (validity.h).
  const Metric* metric = nullptr;
  Spread baseline, candidate;
  // How much slower the candidate's median is, as a fraction of the baseline's (negative:
  // faster). Unset when a side has no figure.
  std::optional<double> slowdown;
  // Both sides had two or more repetitions, so the noise was measured.
  bool noise_known = false;
  bool failed = false;
  // Why, in words: "31.2% slower, beyond the noise", "within noise (12.0% slower)".
  std::string reason;
};

struct GateResult {
  std::vector<GateCheck> checks;
  size_t failures = 0;
  // Of those, validity checks that failed: phases of the candidate whose hosts did not run
  // together, so that its all-hosts figures are not the fleet's.
  size_t invalid = 0;
  // Some check had a single repetition on a side.
  bool noise_unknown_somewhere = false;
};

// `rows` from CompareRuns(baseline, candidate, /*aggregates=*/false).
GateResult EvaluateGate(const std::vector<ComparisonRow>& rows, const GateOptions& options);

// Adds one validity check per run of each phase of `candidate` that ran on several hosts at
// once: it fails when the phase's verdict is INVALID, whatever its figures.
void AddValidityChecks(const RunRecord& candidate, GateResult* result);

// What the gate prints after the comparison table: the threshold and metrics, the failed
// checks (at most `max_failed`, the rest counted: the JUnit and Markdown files hold every
// check), the note about unmeasured noise where it applies, and the verdict line.
inline constexpr size_t kFailedChecksShown = 24;
std::string FormatGate(const GateResult& result, const GateOptions& options,
                       size_t max_failed = SIZE_MAX);

// JUnit XML: one <testsuite> for the comparison, one <testcase> per check (classname
// "stormark.PHASE" or "stormark.PHASE[SWEEP]", name "HOST TARGET METRIC"), a <failure> for
// each failed check. `timestamp_unix_nanos` is the candidate's start.
std::string GateJUnit(const GateResult& result, const GateOptions& options,
                      const std::string& baseline_run, const std::string& candidate_run,
                      int64_t timestamp_unix_nanos);

// A Markdown summary for a pull request: the verdict, both runs, and a table of the checks
// (failed ones first), at most kMarkdownChecks of them, then how many more (and how many of
// those failed): a fleet's ten thousand checks would pass GitHub's 65,536-character limit on
// a comment several times over.
inline constexpr size_t kMarkdownChecks = 100;
std::string GateMarkdown(const GateResult& result, const GateOptions& options,
                         const std::string& baseline_run, const std::string& candidate_run);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_REPORT_GATE_H_
