#include "controller/report/report_gate.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "common/strings.h"
#include "common/units.h"
#include "controller/report/html/markup.h"
#include "controller/report/text_table.h"
#include "controller/report/validity.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::StrCat;

std::string Percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string Place(const SeriesKey& key) {
  return key.sweep.empty() ? key.phase : fmt::format("{} [{}]", key.phase, key.sweep);
}

GateCheck Check(const ComparisonRow& row, const MetricComparison& m, double threshold) {
  const Metric* metric = m.metric;
  GateCheck check;
  check.key = row.key;
  check.metric = metric;
  check.baseline = m.a;
  check.candidate = m.b;
  const Spread& a = check.baseline;
  const Spread& b = check.candidate;
  check.noise_known = a.count >= 2 && b.count >= 2;
  if (a.count == 0) {
    check.reason = "new: not in the baseline";
    return check;
  }
  if (b.count == 0) {
    check.failed = true;
    check.reason = row.runs_b == 0 ? "missing from the candidate run"
                                   : "no successful repetition in the candidate run";
    return check;
  }
  if (a.median > 0) {
    const double change = (b.median - a.median) / a.median;
    check.slowdown = metric->higher_is_better ? -change : change;
  }
  const double slowdown = check.slowdown.value_or(0);
  const bool past_threshold = slowdown > threshold;
  const bool past_noise =
      !check.noise_known || Judge(a, b, metric->higher_is_better) == Verdict::kWorse;
  const std::string how =
      slowdown >= 0 ? Percent(slowdown) + " slower" : Percent(-slowdown) + " faster";
  if (past_threshold && past_noise) {
    check.failed = true;
    check.reason =
        check.noise_known ? how + ", beyond the noise" : how + " (one repetition: noise unknown)";
  } else if (past_threshold) {
    check.reason = "within noise (" + how + ")";
  } else {
    check.reason = how;
  }
  if (row.failed_b > row.failed_a) {
    check.failed = true;
    check.reason = fmt::format("{} of {} repetitions failed in the candidate run; {}", row.failed_b,
                               row.runs_b, check.reason);
  }
  return check;
}

std::string MetricNames(const GateOptions& options) {
  std::string names;
  for (const Metric* m : options.metrics) names += StrCat(names.empty() ? "" : ", ", m->name);
  return names;
}

std::string GateVerdict(const GateResult& result, const GateOptions& options) {
  if (result.failures == 0) {
    return fmt::format("PASSED: none of {} checks is slower than {} beyond the noise",
                       result.checks.size(), Percent(options.threshold));
  }
  const size_t regressed = result.failures - result.invalid;
  if (result.invalid == 0) {
    return fmt::format("FAILED: {} of {} checks regressed past {}", result.failures,
                       result.checks.size(), Percent(options.threshold));
  }
  std::string verdict =
      fmt::format("FAILED: {} of {} checks", result.failures, result.checks.size());
  if (regressed > 0) {
    verdict += fmt::format(", {} regressed past {}", regressed, Percent(options.threshold));
  }
  return verdict + fmt::format(", {} phase run{} INVALID (the hosts did not run together)",
                               result.invalid, result.invalid == 1 ? "" : "s");
}

// The metric's name, or "validity" for a validity check.
std::string_view CheckName(const GateCheck& check) {
  return check.metric ? std::string_view(check.metric->name) : std::string_view("validity");
}

std::string Figure(const GateCheck& check, const Spread& spread) {
  return check.metric ? FormatSpread(*check.metric, spread) : "-";
}

// A Markdown table cell: no line breaks, pipes escaped, markup inert.
std::string Cell(std::string_view text) {
  std::string out;
  for (const char c : EscapeMarkup(text)) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

common::StatusOr<double> ParseThreshold(std::string_view text) {
  std::string_view number = common::Trim(text);
  if (!number.empty() && number.back() == '%') number.remove_suffix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(value) || value < 0 || value >= 1000) {
    return absl::InvalidArgumentError(
        StrCat("--fail-if-slower '", text, "': expected a percentage such as 10% or 2.5%"));
  }
  return value / 100;
}

common::StatusOr<std::vector<const Metric*>> GateMetrics(const std::vector<std::string>& names) {
  std::vector<const Metric*> metrics;
  if (names.empty()) {
    for (std::string_view name : kDefaultGateMetrics) metrics.push_back(FindMetric(name));
    return metrics;
  }
  for (const std::string& name : names) {
    const Metric* metric = FindMetric(name);
    if (metric == nullptr) {
      std::string known;
      for (const Metric& m : Metrics()) known += StrCat(known.empty() ? "" : ", ", m.name);
      return absl::InvalidArgumentError(
          StrCat("--metric '", name, "': no such metric (metrics: ", known, ")"));
    }
    if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end()) {
      metrics.push_back(metric);
    }
  }
  return metrics;
}

GateResult EvaluateGate(const std::vector<ComparisonRow>& rows, const GateOptions& options) {
  GateResult result;
  for (const ComparisonRow& row : rows) {
    for (const Metric* metric : options.metrics) {
      const MetricComparison* m = nullptr;
      for (const MetricComparison& candidate : row.metrics) {
        if (candidate.metric == metric) m = &candidate;
      }
      // A metric neither side has (IOPS of a command) is not a check.
      if (m == nullptr) continue;
      GateCheck check = Check(row, *m, options.threshold);
      result.noise_unknown_somewhere =
          result.noise_unknown_somewhere ||
          (!check.noise_known && check.baseline.count > 0 && check.candidate.count > 0);
      result.failures += check.failed ? 1 : 0;
      result.checks.push_back(std::move(check));
    }
  }
  return result;
}

void AddValidityChecks(const RunRecord& candidate, GateResult* result) {
  for (const PhaseOutcome& phase : candidate.phases) {
    const PhaseValidity validity = JudgeValidity(phase);
    if (!validity.judged()) continue;
    GateCheck check;
    check.key = {phase.plan.name, DescribeSweepPoint(phase.plan.sweep_point), "all hosts", ""};
    check.failed = validity.invalid();
    check.noise_known = true;
    std::string text(common::Trim(ValidityLines(validity)));
    text = text.substr(0, text.find('\n'));
    check.reason =
        fmt::format("run {}: {}", phase.plan.repetition + 1, text.substr(text.find(':') + 2));
    result->failures += check.failed ? 1 : 0;
    result->invalid += check.failed ? 1 : 0;
    result->checks.push_back(std::move(check));
  }
}

std::string FormatGate(const GateResult& result, const GateOptions& options, size_t max_failed) {
  std::string out = fmt::format("\nGate: fail if slower than the baseline by more than {}, on {}\n",
                                Percent(options.threshold), MetricNames(options));
  if (result.noise_unknown_somewhere) {
    out +=
        "  Some figures come from a single repetition on a side: their noise is unknown, so\n"
        "  they are judged on the threshold alone. Use 'repeat: 3' (or --set repeat=3) in both\n"
        "  runs to measure it.\n";
  }
  TextTable table;
  for (const char* header : {"phase", "host", "target", "metric", "baseline", "candidate"}) {
    table.AddColumn(header, TextTable::Align::kLeft);
  }
  table.AddColumn("", TextTable::Align::kLeft);
  size_t listed = 0;
  for (const GateCheck& check : result.checks) {
    if (!check.failed || listed == max_failed) continue;
    ++listed;
    table.AddRow({Place(check.key), check.key.host, check.key.target, std::string(CheckName(check)),
                  Figure(check, check.baseline), Figure(check, check.candidate), check.reason});
  }
  if (listed > 0) {
    out += "\n" + table.Render("  ");
    if (listed < result.failures) {
      out += fmt::format(
          "  and {} more failed checks (--all-hosts prints them all; --junit and --markdown "
          "files hold every check)\n",
          result.failures - listed);
    }
    out += "\n";
  }
  out += "gate: " + GateVerdict(result, options) + "\n";
  return out;
}

std::string GateJUnit(const GateResult& result, const GateOptions& options,
                      const std::string& baseline_run, const std::string& candidate_run,
                      int64_t timestamp_unix_nanos) {
  const std::string suite =
      fmt::format("stormark gate: {} against {}", candidate_run, baseline_run);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"stormark\" tests=\"{}\" failures=\"{}\">\n",
                     result.checks.size(), result.failures);
  out += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" "
      "timestamp=\"{}\">\n",
      EscapeMarkup(suite), result.checks.size(), result.failures,
      common::FormatUtc(timestamp_unix_nanos, "%Y-%m-%dT%H:%M:%S"));
  out += "    <properties>\n";
  const std::vector<std::pair<std::string, std::string>> properties = {
      {"baseline", baseline_run},
      {"candidate", candidate_run},
      {"fail_if_slower", Percent(options.threshold)},
      {"metrics", MetricNames(options)}};
  for (const auto& [name, value] : properties) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, EscapeMarkup(value));
  }
  out += "    </properties>\n";
  for (const GateCheck& check : result.checks) {
    const std::string classname =
        "stormark." + (check.key.sweep.empty()
                           ? check.key.phase
                           : fmt::format("{}[{}]", check.key.phase, check.key.sweep));
    const std::string name =
        fmt::format("{} {} {}", check.key.host, check.key.target, CheckName(check));
    const std::string detail =
        fmt::format("baseline {}, candidate {}: {}", Figure(check, check.baseline),
                    Figure(check, check.candidate), check.reason);
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">",
                       EscapeMarkup(classname), EscapeMarkup(name));
    if (check.failed) {
      out += fmt::format("\n      <failure type=\"regression\" message=\"{}\">{}</failure>\n    ",
                         EscapeMarkup(CheckName(check)) + ": " + EscapeMarkup(check.reason),
                         EscapeMarkup(detail));
    } else {
      out += fmt::format("<system-out>{}</system-out>", EscapeMarkup(detail));
    }
    out += "</testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string GateMarkdown(const GateResult& result, const GateOptions& options,
                         const std::string& baseline_run, const std::string& candidate_run) {
  std::string out = fmt::format("### stormark gate: {}\n\n", GateVerdict(result, options));
  out += fmt::format(
      "Candidate `{}` against baseline `{}`; fail if slower by more than {} "
      "beyond the noise, on {}.\n",
      candidate_run, baseline_run, Percent(options.threshold), MetricNames(options));
  if (result.noise_unknown_somewhere) {
    out +=
        "Some figures come from a single repetition on a side: their noise is unknown and "
        "they are judged on the threshold alone.\n";
  }
  out +=
      "\n| | phase | host | target | metric | baseline | candidate | change |\n"
      "|---|---|---|---|---|---:|---:|---|\n";
  std::vector<const GateCheck*> ordered;
  for (const GateCheck& c : result.checks) ordered.push_back(&c);
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const GateCheck* c) { return c->failed; });
  for (size_t i = 0; i < ordered.size() && i < kMarkdownChecks; ++i) {
    const GateCheck* c = ordered[i];
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", c->failed ? "FAIL" : "ok",
                       Cell(Place(c->key)), Cell(c->key.host), Cell(c->key.target),
                       Cell(CheckName(*c)), Cell(Figure(*c, c->baseline)),
                       Cell(Figure(*c, c->candidate)), Cell(c->reason));
  }
  if (ordered.size() > kMarkdownChecks) {
    const size_t failed_left =
        result.failures > kMarkdownChecks ? result.failures - kMarkdownChecks : 0;
    out += fmt::format(
        "\n... and {} more checks ({} of them failed), left out to keep the summary within a "
        "pull request comment; the JUnit file (`--junit`) holds every check.\n",
        ordered.size() - kMarkdownChecks, failed_left);
  }
  return out;
}

}  // namespace stormark::controller
