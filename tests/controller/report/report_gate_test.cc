#include "controller/report/report_gate.h"

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

GateOptions TenPercent() {
  GateOptions options;
  options.threshold = 0.10;
  options.metrics = *GateMetrics({});
  return options;
}

GateResult Gate(const RunRecord& a, const RunRecord& b, GateOptions options = TenPercent()) {
  return EvaluateGate(CompareRuns(a, b, /*aggregates=*/false), options);
}

const GateCheck& CheckOf(const GateResult& result, std::string_view metric) {
  for (const GateCheck& c : result.checks) {
    if (c.metric && c.metric->name == metric) return c;
  }
  ADD_FAILURE() << "no check of " << metric;
  return result.checks.front();
}

TEST(ParseThreshold, TakesPercentages) {
  EXPECT_DOUBLE_EQ(*ParseThreshold("10%"), 0.10);
  EXPECT_DOUBLE_EQ(*ParseThreshold("2.5"), 0.025);
  EXPECT_DOUBLE_EQ(*ParseThreshold(" 0% "), 0.0);
  for (const char* bad : {"", "%", "ten", "-5%", "10%%", "1e9"}) {
    auto parsed = ParseThreshold(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("--fail-if-slower"));
  }
}

TEST(GateMetrics, DefaultIsTheSpeedFiguresAndUnknownNamesAreRefused) {
  const auto metrics = *GateMetrics({});
  ASSERT_EQ(metrics.size(), 5u);
  EXPECT_EQ(metrics[0]->name, "MiB/s");
  auto bad = GateMetrics({"MB/s"});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("--metric 'MB/s'"));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("p99 lat"));
}

TEST(EvaluateGate, SlowerPastThresholdAndNoiseFails) {
  const GateResult result =
      Gate(RepeatedRun("a", "h", {100, 102, 98}), RepeatedRun("b", "h", {60, 61, 59}));
  EXPECT_EQ(result.failures, 2u);  // MiB/s and ops/s; latency and elapsed did not move.
  const GateCheck& mibps = CheckOf(result, "MiB/s");
  EXPECT_TRUE(mibps.failed);
  EXPECT_TRUE(mibps.noise_known);
  EXPECT_NEAR(*mibps.slowdown, 0.40, 1e-9);
  EXPECT_EQ(mibps.reason, "40.0% slower, beyond the noise");
  EXPECT_FALSE(CheckOf(result, "p99 lat").failed);
  EXPECT_FALSE(result.noise_unknown_somewhere);
}

TEST(EvaluateGate, SlowerPastThresholdButWithinNoisePasses) {
  // Median 12% lower, but the ranges overlap: the noise is as large as the difference.
  const GateResult result =
      Gate(RepeatedRun("a", "h", {100, 70, 130}), RepeatedRun("b", "h", {88, 60, 120}));
  EXPECT_EQ(result.failures, 0u);
  EXPECT_EQ(CheckOf(result, "MiB/s").reason, "within noise (12.0% slower)");
}

TEST(EvaluateGate, FasterOrSlightlySlowerPasses) {
  EXPECT_EQ(Gate(RepeatedRun("a", "h", {100, 101}), RepeatedRun("b", "h", {150, 151})).failures,
            0u);
  EXPECT_EQ(Gate(RepeatedRun("a", "h", {100, 101}), RepeatedRun("b", "h", {95, 96})).failures, 0u);
}

TEST(EvaluateGate, OneRepetitionIsJudgedOnTheThresholdAloneAndSaysSo) {
  const GateResult slow = Gate(RepeatedRun("a", "h", {100}), RepeatedRun("b", "h", {80}));
  EXPECT_TRUE(slow.noise_unknown_somewhere);
  EXPECT_TRUE(CheckOf(slow, "MiB/s").failed);
  EXPECT_EQ(CheckOf(slow, "MiB/s").reason, "20.0% slower (one repetition: noise unknown)");
  EXPECT_THAT(FormatGate(slow, TenPercent()), HasSubstr("noise is unknown"));
  EXPECT_EQ(Gate(RepeatedRun("a", "h", {100}), RepeatedRun("b", "h", {95})).failures, 0u);
}

TEST(EvaluateGate, AHostMissingOrFailingInTheCandidateFails) {
  const RunRecord a =
      MakeRun("a", {"h1", "h2"},
              {Phase(WritePlan(), {SucceededHost("h1", 100), SucceededHost("h2", 100)})});
  const RunRecord gone = MakeRun("b", {"h1"}, {Phase(WritePlan(), {SucceededHost("h1", 100)})});
  const GateResult missing = Gate(a, gone);
  EXPECT_GT(missing.failures, 0u);
  for (const GateCheck& c : missing.checks) {
    EXPECT_EQ(c.failed, c.key.host == "h2") << c.key.host << " " << c.metric->name;
    if (c.failed) {
      EXPECT_EQ(c.reason, "missing from the candidate run");
    }
  }
  const RunRecord down = MakeRun(
      "b", {"h1", "h2"}, {Phase(WritePlan(), {SucceededHost("h1", 100), UnreachableHost("h2")})});
  const GateResult failed = Gate(a, down);
  EXPECT_EQ(failed.failures, 5u);
  EXPECT_EQ(CheckOf(failed, "MiB/s").key.host, "h1");
}

TEST(GateJUnit, ATestcasePerHostPhaseAndMetricWithFailures) {
  RunRecord a = RepeatedRun("ra", "db<1>", {100, 102, 98});
  RunRecord b = RepeatedRun("rb", "db<1>", {60, 61, 59});
  const GateResult result = Gate(a, b);
  const std::string xml = GateJUnit(result, TenPercent(), "ra", "rb", kBase);
  EXPECT_TRUE(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
  EXPECT_THAT(xml, HasSubstr("tests=\"5\" failures=\"2\""));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"stormark.seq-write\" "
                             "name=\"db&lt;1&gt; scratch MiB/s\""));
  EXPECT_THAT(xml, HasSubstr("<failure type=\"regression\" message=\"MiB/s: 40.0% slower, "
                             "beyond the noise\">"));
  EXPECT_THAT(xml, Not(HasSubstr("db<1>")));
  EXPECT_THAT(xml, HasSubstr("<property name=\"fail_if_slower\" value=\"10.0%\"/>"));
}

TEST(GateMarkdown, FailuresFirstAndCellsEscaped) {
  const GateResult result =
      Gate(RepeatedRun("ra", "a|b", {100, 102, 98}), RepeatedRun("rb", "a|b", {60, 61, 59}));
  const std::string md = GateMarkdown(result, TenPercent(), "ra", "rb");
  EXPECT_TRUE(md.starts_with("### stormark gate: FAILED: 2 of 5 checks regressed past 10.0%"));
  EXPECT_THAT(md, HasSubstr("| FAIL | seq-write | a\\|b | scratch | MiB/s |"));
  EXPECT_LT(md.find("| FAIL |"), md.find("| ok |"));
}

TEST(AddValidityChecks, AnInvalidPhaseOfTheCandidateFailsTheGateWhateverItsFigures) {
  const RunRecord baseline = MakeRun(
      "base", {"a", "b"}, {Phase(WritePlan(), {SucceededHost("a", 100), SucceededHost("b", 100)})});
  // As fast as the baseline on every host, but b started after a had finished.
  HostOutcome late = SucceededHost("b", 100);
  late.result->set_start_unix_nanos(kBase + 3 * kSecond);
  const RunRecord candidate =
      MakeRun("cand", {"a", "b"}, {Phase(WritePlan(), {SucceededHost("a", 100), late})});

  GateResult result = Gate(baseline, candidate);
  ASSERT_EQ(result.failures, 0u);
  AddValidityChecks(candidate, &result);
  EXPECT_EQ(result.failures, 1u);
  EXPECT_EQ(result.invalid, 1u);
  const GateCheck& check = result.checks.back();
  EXPECT_EQ(check.metric, nullptr);
  EXPECT_EQ(check.key.host, "all hosts");
  EXPECT_TRUE(check.failed);
  EXPECT_EQ(check.reason,
            "run 1: INVALID: b started 2.00 s after a had finished: the hosts never ran together; "
            "the all-hosts figures are not the fleet's");
  const std::string text = FormatGate(result, TenPercent());
  EXPECT_THAT(text, HasSubstr("all hosts"));
  EXPECT_THAT(text, HasSubstr("validity"));
  EXPECT_THAT(text, HasSubstr("gate: FAILED: 1 of "));
  EXPECT_THAT(text, HasSubstr(", 1 phase run INVALID (the hosts did not run together)"));
  EXPECT_THAT(GateJUnit(result, TenPercent(), "base", "cand", kBase),
              HasSubstr("name=\"all hosts  validity\""));
  EXPECT_THAT(GateMarkdown(result, TenPercent(), "base", "cand"),
              HasSubstr("| FAIL | seq-write | all hosts |  | validity |"));

  // The baseline's own phase is valid: a passing check, so the verdict is visible either way.
  GateResult again = Gate(candidate, baseline);
  AddValidityChecks(baseline, &again);
  EXPECT_EQ(again.invalid, 0u);
  EXPECT_FALSE(again.checks.back().failed);
  EXPECT_THAT(again.checks.back().reason, HasSubstr("run 1: valid: start spread"));
}

TEST(FormatGate, AFleetsFailedChecksAreListedUpToTheCapAndCounted) {
  // 40 hosts, each 50% slower on MiB/s and ops/s over three repetitions: 80 failed checks.
  std::vector<PhaseOutcome> base, slow;
  std::vector<std::string> names;
  for (size_t h = 0; h < 40; ++h) names.push_back(fmt::format("h{}", h));
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<HostOutcome> fast_hosts, slow_hosts;
    for (const std::string& name : names) {
      fast_hosts.push_back(SucceededHost(name, 100 + static_cast<uint64_t>(rep)));
      slow_hosts.push_back(SucceededHost(name, 50 + static_cast<uint64_t>(rep)));
    }
    base.push_back(Phase(WritePlan(), std::move(fast_hosts), rep));
    slow.push_back(Phase(WritePlan(), std::move(slow_hosts), rep));
  }
  const GateResult result =
      Gate(MakeRun("ra", names, std::move(base)), MakeRun("rb", names, std::move(slow)));
  ASSERT_EQ(result.failures, 80u);
  const std::string capped = FormatGate(result, TenPercent(), kFailedChecksShown);
  EXPECT_THAT(capped, HasSubstr("  and 56 more failed checks (--all-hosts prints them all; "
                                "--junit and --markdown files hold every check)\n"));
  EXPECT_THAT(capped, HasSubstr("gate: FAILED: 80 of 200 checks regressed past 10.0%\n"));
  const std::string every = FormatGate(result, TenPercent());
  EXPECT_THAT(every, Not(HasSubstr("more failed checks")));
  EXPECT_GT(every.size(), capped.size() * 2);
  // 200 checks: the Markdown summary holds the 80 failed and 20 passed, and counts the rest.
  const std::string markdown = GateMarkdown(result, TenPercent(), "ra", "rb");
  size_t fails = 0, oks = 0;
  for (size_t at = markdown.find("| FAIL |"); at != std::string::npos;
       at = markdown.find("| FAIL |", at + 1)) {
    ++fails;
  }
  for (size_t at = markdown.find("| ok |"); at != std::string::npos;
       at = markdown.find("| ok |", at + 1)) {
    ++oks;
  }
  EXPECT_EQ(fails, 80u);
  EXPECT_EQ(oks, 20u);
  EXPECT_THAT(markdown, HasSubstr("... and 100 more checks (0 of them failed), left out"));
  EXPECT_LT(markdown.size(), 65536u);
}

}  // namespace
}  // namespace stormark::controller
