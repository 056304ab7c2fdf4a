#include "controller/report/summary.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using stormark::v1::PhaseResult;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kBase = 1'700'000'000 * kSecond;

common::LatencyHistogram HistogramOf(const std::vector<uint64_t>& values) {
  common::LatencyHistogram h;
  for (uint64_t v : values) h.Record(v);
  return h;
}

// A succeeded result: `bytes` in `ops` operations, timed from `start` (agent clock) for
// `elapsed` ns, with the latencies `values`.
PhaseResult Succeeded(uint64_t bytes, uint64_t ops, int64_t start, int64_t elapsed,
                      const std::vector<uint64_t>& values) {
  PhaseResult r;
  r.set_state(PhaseResult::SUCCEEDED);
  r.set_bytes(bytes);
  r.set_ops(ops);
  r.set_start_unix_nanos(start);
  r.set_end_unix_nanos(start + elapsed);
  r.set_elapsed_nanos(elapsed);
  HistogramOf(values).ToProto(r.mutable_latency());
  return r;
}

HostOutcome Host(std::string name, std::optional<PhaseResult> result, std::string error = "",
                 int64_t offset = 0) {
  HostOutcome host;
  host.host = std::move(name);
  host.target = "scratch";
  host.result = std::move(result);
  host.error = std::move(error);
  host.clock.offset_nanos = offset;
  return host;
}

TEST(Summarize, OneSucceededHostAndOneErrorHost) {
  PhaseOutcome outcome;
  PhaseResult r = Succeeded(8 << 20, 8, kBase, 2 * kSecond, {1000, 2000, 3000});
  r.set_cpu_user_nanos(kSecond / 2);
  r.set_cpu_system_nanos(kSecond / 2);
  outcome.hosts.push_back(Host("db1:7420", r));
  outcome.hosts.push_back(Host("db2:7420", std::nullopt, "host db2:7420: unreachable"));

  const PhaseSummary s = Summarize(outcome);
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].host, "db1:7420");
  EXPECT_EQ(s.rows[0].target, "scratch");
  EXPECT_EQ(s.rows[0].status, "succeeded");
  EXPECT_EQ(s.rows[0].error, "");
  EXPECT_EQ(s.rows[0].bytes, 8u << 20);
  EXPECT_EQ(s.rows[0].ops, 8u);
  EXPECT_DOUBLE_EQ(s.rows[0].elapsed_seconds, 2.0);
  EXPECT_DOUBLE_EQ(s.rows[0].bytes_per_second, 4.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(s.rows[0].cpu_percent, 50.0);
  EXPECT_EQ(s.rows[0].latency.count(), 3u);
  EXPECT_EQ(s.rows[0].hosts, 1);

  EXPECT_EQ(s.rows[1].host, "db2:7420");
  EXPECT_EQ(s.rows[1].status, "error");
  EXPECT_EQ(s.rows[1].error, "host db2:7420: unreachable");
  EXPECT_EQ(s.rows[1].bytes, 0u);

  EXPECT_EQ(s.failed, 1);
  ASSERT_TRUE(s.all_hosts.has_value());
  EXPECT_EQ(s.all_hosts->host, "all hosts");
  EXPECT_EQ(s.all_hosts->target, "");
  EXPECT_EQ(s.all_hosts->status, "succeeded");
  EXPECT_EQ(s.all_hosts->hosts, 1);
  EXPECT_EQ(s.all_hosts->bytes, 8u << 20);
  EXPECT_EQ(s.all_hosts->ops, 8u);
  EXPECT_DOUBLE_EQ(s.all_hosts->elapsed_seconds, 2.0);
}

TEST(Summarize, AllHostsAddsUpAndMergesHistograms) {
  const std::vector<uint64_t> a = {900, 1'200, 5'000, 80'000, 1'000'000};
  const std::vector<uint64_t> b = {300, 40'000, 41'000, 2'500'000, 7'000'000, 9'000'000};
  PhaseOutcome outcome;
  outcome.hosts.push_back(Host("a", Succeeded(100, 5, kBase, kSecond, a)));
  outcome.hosts.push_back(Host("b", Succeeded(300, 6, kBase, kSecond, b)));

  const PhaseSummary s = Summarize(outcome);
  EXPECT_EQ(s.failed, 0);
  ASSERT_TRUE(s.all_hosts.has_value());
  EXPECT_EQ(s.all_hosts->hosts, 2);
  EXPECT_EQ(s.all_hosts->bytes, 400u);
  EXPECT_EQ(s.all_hosts->ops, 11u);

  std::vector<uint64_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  const common::LatencyHistogram expected = HistogramOf(all);
  const common::LatencyHistogram& merged = s.all_hosts->latency;
  EXPECT_EQ(merged.count(), expected.count());
  EXPECT_EQ(merged.min(), 300u);
  EXPECT_EQ(merged.max(), 9'000'000u);
  for (double p : {1.0, 25.0, 50.0, 75.0, 90.0, 99.0, 100.0}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(merged.Percentile(p), expected.Percentile(p));
  }
  // Not the mean of the hosts' medians.
  EXPECT_NE(merged.Percentile(50),
            (s.rows[0].latency.Percentile(50) + s.rows[1].latency.Percentile(50)) / 2);
}

TEST(Summarize, AllHostsElapsedRunsFromFirstStartToLastEndOnTheControllerClock) {
  // Host a's clock is 5 ms ahead and it started at controller time kBase; host b's clock is
  // 3 ms behind and it started 10 ms later by the controller's clock and ran 2 s.
  PhaseOutcome outcome;
  outcome.hosts.push_back(
      Host("a", Succeeded(1 << 20, 1, kBase + 5 * kMs, kSecond, {1000}), "", 5 * kMs));
  outcome.hosts.push_back(Host(
      "b", Succeeded(3 << 20, 3, kBase + 10 * kMs - 3 * kMs, 2 * kSecond, {1000}), "", -3 * kMs));

  const PhaseSummary s = Summarize(outcome);
  ASSERT_TRUE(s.all_hosts.has_value());
  // First start kBase, last end kBase + 10 ms + 2 s.
  EXPECT_DOUBLE_EQ(s.all_hosts->elapsed_seconds, 2.010);
  EXPECT_DOUBLE_EQ(s.all_hosts->bytes_per_second, (4 << 20) / 2.010);
}

TEST(Summarize, SequentialHostsGiveTheMeanOfHostsInEveryFigure) {
  PhaseOutcome outcome;
  outcome.mode = RunMode::kSequential;
  // One after the other: 4 MiB in 2 s, then 8 MiB in 1 s.
  outcome.hosts.push_back(Host("db1", Succeeded(4 << 20, 4, kBase, 2 * kSecond, {1000})));
  outcome.hosts.push_back(Host("db2", Succeeded(8 << 20, 8, kBase + 2 * kSecond, kSecond, {2000})));
  const PhaseSummary s = Summarize(outcome);
  ASSERT_TRUE(s.all_hosts.has_value());
  EXPECT_EQ(s.all_hosts->host, "mean of hosts");
  EXPECT_EQ(s.all_hosts->bytes, 6u << 20);
  EXPECT_EQ(s.all_hosts->ops, 6u);
  EXPECT_DOUBLE_EQ(s.all_hosts->elapsed_seconds, 1.5) << "a mean, not the 3 s of both";
  EXPECT_DOUBLE_EQ(s.all_hosts->bytes_per_second, (2.0 + 8.0) / 2 * (1 << 20));
  EXPECT_EQ(s.all_hosts->latency.count(), 2u) << "the histograms are merged";
}

TEST(Summarize, CpuOfAllHostsIsTheMeanOverHosts) {
  PhaseResult a = Succeeded(1, 1, kBase, kSecond, {1});
  a.set_cpu_user_nanos(kSecond);  // 100%
  PhaseResult b = Succeeded(1, 1, kBase, kSecond, {1});
  b.set_cpu_system_nanos(kSecond / 5);  // 20%
  PhaseOutcome outcome;
  outcome.hosts = {Host("a", a), Host("b", b)};
  const PhaseSummary s = Summarize(outcome);
  ASSERT_TRUE(s.all_hosts.has_value());
  EXPECT_DOUBLE_EQ(s.all_hosts->cpu_percent, 60.0);
}

TEST(Summarize, FailedAndAbortedResultsKeepTheirStateAndStayOutOfAllHosts) {
  PhaseResult failed = Succeeded(10, 1, kBase, kSecond, {1});
  failed.set_state(PhaseResult::FAILED);
  PhaseResult aborted = Succeeded(20, 2, kBase, kSecond, {1});
  aborted.set_state(PhaseResult::ABORTED);
  PhaseOutcome outcome;
  outcome.hosts = {Host("ok", Succeeded(40, 4, kBase, kSecond, {1})),
                   Host("f", failed, "failed: disk full"), Host("x", aborted, "aborted: stop")};

  const PhaseSummary s = Summarize(outcome);
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[1].status, "failed");
  EXPECT_EQ(s.rows[1].error, "failed: disk full");
  EXPECT_EQ(s.rows[1].bytes, 10u);  // partial figures stay on the host's row
  EXPECT_EQ(s.rows[2].status, "aborted");
  EXPECT_EQ(s.failed, 2);
  ASSERT_TRUE(s.all_hosts.has_value());
  EXPECT_EQ(s.all_hosts->bytes, 40u);
  EXPECT_EQ(s.all_hosts->hosts, 1);
}

TEST(Summarize, NoSucceededHostMeansNoAllHostsRow) {
  PhaseOutcome outcome;
  outcome.hosts = {Host("a", std::nullopt, "unreachable"), Host("b", std::nullopt, "refused")};
  const PhaseSummary s = Summarize(outcome);
  EXPECT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.failed, 2);
  EXPECT_FALSE(s.all_hosts.has_value());
}

TEST(Summarize, CorruptHistogramMakesThatRowAnError) {
  PhaseResult corrupt = Succeeded(100, 3, kBase, kSecond, {10, 20, 30});
  corrupt.mutable_latency()->set_count(99);  // buckets add up to 3
  PhaseOutcome outcome;
  outcome.hosts = {Host("good", Succeeded(50, 2, kBase, kSecond, {10, 20})), Host("bad", corrupt)};

  const PhaseSummary s = Summarize(outcome);
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].status, "succeeded");
  EXPECT_EQ(s.rows[1].status, "error");
  EXPECT_THAT(s.rows[1].error, HasSubstr("histogram"));
  EXPECT_EQ(s.failed, 1);
  ASSERT_TRUE(s.all_hosts.has_value());
  EXPECT_EQ(s.all_hosts->bytes, 50u);
  EXPECT_EQ(s.all_hosts->latency.count(), 2u);
}

TEST(Summarize, WarningsStayOnTheirRowAndAreTaggedInAllHosts) {
  PhaseResult a = Succeeded(1, 1, kBase, kSecond, {1});
  a.add_warnings("size is under 2x RAM");
  PhaseOutcome outcome;
  outcome.hosts = {Host("a", a), Host("b", Succeeded(1, 1, kBase, kSecond, {1}))};
  const PhaseSummary s = Summarize(outcome);
  EXPECT_THAT(s.rows[0].warnings, ElementsAre("size is under 2x RAM"));
  EXPECT_TRUE(s.rows[1].warnings.empty());
  ASSERT_TRUE(s.all_hosts.has_value());
  EXPECT_THAT(s.all_hosts->warnings, ElementsAre("a: size is under 2x RAM"));
}

}  // namespace
}  // namespace stormark::controller
