#include "controller/report/report_compare.h"

#include <algorithm>
#include <set>

#include "controller/report/environment.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

Spread Of(std::vector<double> values) { return SpreadOf(std::move(values)); }

TEST(Judge, OverlappingRangesAreWithinNoise) {
  EXPECT_EQ(Judge(Of({100, 104, 110}), Of({108, 112, 115}), true), Verdict::kWithinNoise);
  // Touching ends overlap.
  EXPECT_EQ(Judge(Of({100, 110}), Of({110, 120}), true), Verdict::kWithinNoise);
}

TEST(Judge, SeparateRangesAreBetterOrWorseInTheMetricsDirection) {
  const Spread low = Of({100, 102, 101});
  const Spread high = Of({120, 125, 122});
  EXPECT_EQ(Judge(low, high, /*higher_is_better=*/true), Verdict::kBetter);
  EXPECT_EQ(Judge(high, low, /*higher_is_better=*/true), Verdict::kWorse);
  // Latency: higher is worse.
  EXPECT_EQ(Judge(low, high, /*higher_is_better=*/false), Verdict::kWorse);
  EXPECT_EQ(Judge(high, low, /*higher_is_better=*/false), Verdict::kBetter);
}

TEST(Judge, OneRepetitionOnEitherSideLeavesTheNoiseUnknown) {
  EXPECT_EQ(Judge(Of({100}), Of({200, 210}), true), Verdict::kNoiseUnknown);
  EXPECT_EQ(Judge(Of({100, 101}), Of({200}), true), Verdict::kNoiseUnknown);
  // Even a large difference: one number says nothing about the noise.
  EXPECT_EQ(Judge(Of({100}), Of({1000}), true), Verdict::kNoiseUnknown);
  EXPECT_EQ(Judge(Of({}), Of({1000}), true), Verdict::kMissing);
}

TEST(SpreadOf, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(Of({3, 1, 2}).median, 2);
  EXPECT_DOUBLE_EQ(Of({4, 1, 3, 2}).median, 2.5);
  const Spread s = Of({5, 1, 9});
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_EQ(s.count, 3u);
}

const MetricComparison& MetricOf(const ComparisonRow& row, std::string_view name) {
  for (const MetricComparison& m : row.metrics) {
    if (m.metric->name == name) return m;
  }
  ADD_FAILURE() << "no metric " << name;
  return row.metrics.front();
}

TEST(CompareRuns, MedianRatioAndVerdictPerMetric) {
  const RunRecord a = RepeatedRun("ra", "local", {100, 102, 98});
  const RunRecord b = RepeatedRun("rb", "local", {150, 149, 152});
  const std::vector<ComparisonRow> rows = CompareRuns(a, b);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key.host, "local");
  EXPECT_EQ(rows[0].runs_a, 3u);
  EXPECT_EQ(rows[0].runs_b, 3u);
  const MetricComparison& mibps = MetricOf(rows[0], "MiB/s");
  EXPECT_DOUBLE_EQ(mibps.a.median, 100);
  EXPECT_DOUBLE_EQ(mibps.b.median, 150);
  ASSERT_TRUE(mibps.ratio.has_value());
  EXPECT_DOUBLE_EQ(*mibps.ratio, 1.5);
  EXPECT_EQ(mibps.verdict, Verdict::kBetter);
}

TEST(CompareRuns, FailedRepetitionsAreCountedButNotMeasured) {
  RunRecord a = RepeatedRun("ra", "db1", {100, 101});
  a.phases.push_back(Phase(WritePlan(), {UnreachableHost("db1")}, 2));
  const RunRecord b = RepeatedRun("rb", "db1", {100, 101});
  const std::vector<ComparisonRow> rows = CompareRuns(a, b);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].runs_a, 3u);
  EXPECT_EQ(rows[0].failed_a, 1);
  EXPECT_EQ(MetricOf(rows[0], "MiB/s").a.count, 2u);
  EXPECT_EQ(MetricOf(rows[0], "MiB/s").verdict, Verdict::kWithinNoise);
}

TEST(CompareRuns, RowsOfOneRunOnlyAreKeptAndSaidSo) {
  const RunRecord a = RepeatedRun("ra", "db1", {100});
  const RunRecord b = RepeatedRun("rb", "db2", {100});
  const std::vector<ComparisonRow> rows = CompareRuns(a, b);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key.host, "db1");
  EXPECT_EQ(rows[0].runs_b, 0u);
  EXPECT_EQ(rows[1].key.host, "db2");
  EXPECT_EQ(rows[1].runs_a, 0u);
  const std::string text = FormatComparison(a, b, rows);
  EXPECT_THAT(text, HasSubstr("only in A"));
  EXPECT_THAT(text, HasSubstr("only in B"));
}

TEST(CompareRuns, SweepPointsAreComparedPointByPoint) {
  auto run = [](const std::string& id, uint64_t at_64k, uint64_t at_1m) {
    return MakeRun(id, {"db1"},
                   {Phase(WritePlan(), {SucceededHost("db1", at_64k)}, 0, {{"chunk", "64k"}}),
                    Phase(WritePlan(), {SucceededHost("db1", at_1m)}, 0, {{"chunk", "1M"}})});
  };
  const std::vector<ComparisonRow> rows = CompareRuns(run("ra", 100, 200), run("rb", 100, 400));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key.sweep, "chunk=64k");
  EXPECT_DOUBLE_EQ(*MetricOf(rows[0], "MiB/s").ratio, 1.0);
  EXPECT_EQ(rows[1].key.sweep, "chunk=1M");
  EXPECT_DOUBLE_EQ(*MetricOf(rows[1], "MiB/s").ratio, 2.0);
}

TEST(CompareRuns, SeveralHostsAlsoCompareTheAggregate) {
  auto run = [](const std::string& id) {
    return MakeRun(id, {"db1", "db2"},
                   {Phase(WritePlan(), {SucceededHost("db1", 100), SucceededHost("db2", 100)})});
  };
  const std::vector<ComparisonRow> rows = CompareRuns(run("ra"), run("rb"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].key.host, "all hosts");
}

TEST(FormatComparison, ShowsSpreadRatioAndTheNoiseRule) {
  const RunRecord a = RepeatedRun("ra", "local", {100, 110});
  const RunRecord b = RepeatedRun("rb", "local", {105, 120});
  const std::string text = FormatComparison(a, b, CompareRuns(a, b));
  EXPECT_THAT(text, HasSubstr("A  ra"));
  EXPECT_THAT(text, HasSubstr("B  rb"));
  EXPECT_THAT(text, HasSubstr("105.0 [100.0-110.0]"));
  EXPECT_THAT(text, HasSubstr("112.5 [105.0-120.0]"));
  EXPECT_THAT(text, HasSubstr("1.07"));
  EXPECT_THAT(text, HasSubstr("within noise"));
  EXPECT_THAT(text, HasSubstr("ranges overlap"));
}

TEST(FormatComparison, DifferentWorkIsSaidBeforeAnyFigure) {
  const RunRecord a = RepeatedRun("ra", "local", {100, 110});
  RunRecord b = RepeatedRun("rb", "local", {105, 120});
  for (PhaseOutcome& phase : b.phases) {
    phase.plan.spec.mutable_stream()->set_size_bytes(uint64_t{256} << 20);
  }
  const std::string text = FormatComparison(a, b, CompareRuns(a, b));
  const size_t said = text.find("! The runs did different work");
  ASSERT_NE(said, std::string::npos) << text;
  EXPECT_LT(said, text.find("105.0")) << "before the figures";
  EXPECT_THAT(text, HasSubstr("    seq-write\n      A: stream write 1 GiB, bs 1 MiB"));
  EXPECT_THAT(text, HasSubstr("      B: stream write 256 MiB, bs 1 MiB"));
  // The same work: not a word.
  const RunRecord c = RepeatedRun("rc", "local", {105, 120});
  EXPECT_EQ(PlanDifferences(a, c), "");
  EXPECT_THAT(FormatComparison(a, c, CompareRuns(a, c)),
              ::testing::Not(HasSubstr("different work")));
}

TEST(FormatComparison, SingleRunsSayTheNoiseIsUnknown) {
  const RunRecord a = RepeatedRun("ra", "local", {100});
  const RunRecord b = RepeatedRun("rb", "local", {200});
  const std::string text = FormatComparison(a, b, CompareRuns(a, b));
  EXPECT_THAT(text, HasSubstr("noise unknown"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("B better")));
}

TEST(FormatComparison, FiguresFromRepetitionsWithNotesAreMarked) {
  RunRecord a = RepeatedRun("ra", "local", {100, 101});
  a.phases[1].hosts[0].result->add_warnings("too fast to time");
  const RunRecord b = RepeatedRun("rb", "local", {100, 101});
  const std::string text = FormatComparison(a, b, CompareRuns(a, b));
  // A's cell is marked, B's is not.
  EXPECT_THAT(text,
              ::testing::ContainsRegex(
                  "100\\.5 \\[100\\.0-101\\.0\\] \\* +100\\.5 \\[100\\.0-101\\.0\\] +1\\.00"));
  EXPECT_THAT(text, HasSubstr("* from a repetition with notes"));
}

// `n` hosts h000, h001, ... at 100 MiB/s (+-1 over three repetitions), but those in `slow`
// at `slow_mibps`, and those in `failing` failed in every repetition; each host's result
// reports the kernel `kernel`.
RunRecord FleetRun(const std::string& run_id, size_t n, const std::set<size_t>& slow,
                   uint64_t slow_mibps, const std::set<size_t>& failing = {},
                   const std::string& kernel = "6.1.0-18") {
  std::vector<std::string> names;
  for (size_t h = 0; h < n; ++h) names.push_back(fmt::format("h{:03}", h));
  std::vector<PhaseOutcome> phases;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<HostOutcome> hosts;
    for (size_t h = 0; h < n; ++h) {
      const uint64_t mibps = (slow.contains(h) ? slow_mibps : 100) + static_cast<uint64_t>(rep);
      HostOutcome host =
          failing.contains(h) ? UnreachableHost(names[h]) : SucceededHost(names[h], mibps);
      if (host.result) (*host.result->mutable_host_environment())["kernel"] = kernel;
      hosts.push_back(std::move(host));
    }
    phases.push_back(Phase(WritePlan(), std::move(hosts), rep));
  }
  return MakeRun(run_id, names, std::move(phases));
}

size_t Rows(const std::string& text, const std::string& host) {
  size_t n = 0;
  for (size_t at = text.find("  " + host + " "); at != std::string::npos;
       at = text.find("  " + host + " ", at + 1)) {
    ++n;
  }
  return n;
}

TEST(FormatComparison, AFleetShowsTheAggregateAndTheHostsThatChangedWorseFirst) {
  const RunRecord a = FleetRun("ra", 40, {}, 0);
  // h007 30% slower, h020 30% faster, h011 failing in B.
  RunRecord b = FleetRun("rb", 40, {7}, 70, {11});
  for (PhaseOutcome& p : b.phases) {
    p.hosts[20] = SucceededHost("h020", 130 + static_cast<uint64_t>(p.plan.repetition));
  }
  const std::string text = FormatComparison(a, b, CompareRuns(a, b));
  EXPECT_EQ(Rows(text, "all hosts"), 1u) << text;
  EXPECT_EQ(Rows(text, "h007"), 1u) << text;
  EXPECT_EQ(Rows(text, "h011"), 2u) << text;  // Its target's row only in A, its failures in B.
  EXPECT_EQ(Rows(text, "h020"), 1u) << text;
  EXPECT_EQ(Rows(text, "h000"), 0u) << text;
  // The worse first: h007 and h011 before h020, whatever the fleet order.
  EXPECT_LT(text.find("  h011 "), text.find("  h020 "));
  EXPECT_LT(text.find("  h007 "), text.find("  h020 "));
  // h011's failed runs have no target: a row of its own, but still one host.
  EXPECT_THAT(text, HasSubstr("  seq-write: 40 hosts: 37 within noise, 0 noise unknown, 3 "
                              "changed (in the table, the worse first); a host's MiB/s B/A: min "
                              "0.70, p50 1.00, max 1.30\n  --all-hosts prints a row per host\n"));
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 50) << text;

  TableView every;
  every.all_hosts = true;
  const std::string all = FormatComparison(a, b, CompareRuns(a, b), every);
  for (const char* host : {"h000", "h007", "h039"}) EXPECT_EQ(Rows(all, host), 1u) << host;
  EXPECT_THAT(all, Not(HasSubstr("--all-hosts prints")));
}

TEST(FormatComparison, AFleetShowsAtMostSixteenChangedHostsAndGroupsItsSettingsNotes) {
  std::set<size_t> slow;
  for (size_t h = 0; h < 20; ++h) slow.insert(h);
  const RunRecord a = FleetRun("ra", 40, {}, 0, {}, "6.1.0-18");
  const RunRecord b = FleetRun("rb", 40, slow, 50, {}, "6.1.0-26");
  const std::string text = FormatComparison(a, b, CompareRuns(a, b));
  EXPECT_THAT(text, HasSubstr("20 changed (16 rows in the table, the worse first)"));
  EXPECT_EQ(Rows(text, "h015"), 1u);
  EXPECT_EQ(Rows(text, "h016"), 0u);
  // Every host's kernel changed: one line, not forty.
  EXPECT_THAT(text, HasSubstr(fmt::format("  {} 40 hosts (h000 scratch, h001 scratch, h002 "
                                          "scratch and 37 more): differs: kernel (A: 6.1.0-18, "
                                          "B: 6.1.0-26)\n",
                                          kDiffersMark)));
}

}  // namespace
}  // namespace stormark::controller
