#include "controller/report/validity.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "controller/plan/plan.h"
#include "controller/report/summary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using stormark::v1::PhaseResult;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kBase = 1'700'000'000 * kSecond;

// A host that ran for `elapsed` from `start` (its own clock, `offset` ahead of the
// controller's), moving 1 MiB per 10 ms in a series of 100 ms intervals.
HostOutcome Ran(const std::string& name, int64_t start, int64_t elapsed, int64_t offset = 0,
                int64_t uncertainty = 0, bool series = true) {
  HostOutcome host;
  host.host = name;
  host.target = "scratch";
  host.clock.offset_nanos = offset;
  host.clock.uncertainty_nanos = uncertainty;
  PhaseResult r;
  r.set_state(PhaseResult::SUCCEEDED);
  r.set_start_unix_nanos(start + offset);
  r.set_end_unix_nanos(start + offset + elapsed);
  r.set_elapsed_nanos(elapsed);
  const uint64_t ops = static_cast<uint64_t>(elapsed / (10 * kMs));
  r.set_ops(ops);
  r.set_bytes(ops << 20);
  if (series) {
    for (int64_t t = 0; t < elapsed; t += 100 * kMs) {
      auto* s = r.add_series();
      s->set_offset_nanos(t);
      s->set_length_nanos(100 * kMs);
      s->set_ops(10);
      s->set_bytes(10 << 20);
    }
  }
  host.result = r;
  return host;
}

PhaseOutcome Concurrent(std::vector<HostOutcome> hosts, double limit = 0) {
  PhaseOutcome outcome;
  outcome.plan.name = "seq";
  outcome.plan.start_spread_limit = limit;
  outcome.hosts = std::move(hosts);
  return outcome;
}

TEST(JudgeValidity, HostsThatStartedWithinTheLimitAreValid) {
  // 2 ms apart plus +-1 ms of clock on a 1 s phase: 0.3%, under 1%.
  const PhaseValidity v = JudgeValidity(Concurrent(
      {Ran("db1", kBase, kSecond, 0, 500'000), Ran("db2", kBase + 2 * kMs, kSecond, 0, 500'000)}));
  EXPECT_EQ(v.verdict, PhaseValidity::Verdict::kValid) << v.why;
  EXPECT_EQ(v.hosts, 2);
  EXPECT_EQ(v.spread_nanos, 2 * kMs);
  EXPECT_EQ(v.uncertainty_nanos, kMs);
  EXPECT_DOUBLE_EQ(v.limit, 0.01);
  EXPECT_NEAR(v.share(), 0.003, 1e-9);
  // Both ran from db2's start to db1's end: 998 ms, 99.8 of each host's 100 MiB.
  EXPECT_EQ(v.window_nanos, 998 * kMs);
  EXPECT_EQ(v.window_bytes, static_cast<uint64_t>(2 * 99.8 * (1 << 20) + 0.5));
  EXPECT_FALSE(v.window_estimated);
  EXPECT_THAT(ValidityLines(v),
              StartsWith("  validity: valid: start spread 2.00 ms +-1.00 ms is 0.3% of the "
                         "shortest host's 1.00 s (limit 1%)\n"));
  EXPECT_THAT(ValidityLines(v), HasSubstr("all 2 hosts ran together for 998 ms"));
}

TEST(JudgeValidity, ASpreadBeyondTheLimitIsInvalidAndNamesTheLateHost) {
  // 20 ms on a 1 s phase: 2%.
  const PhaseValidity v =
      JudgeValidity(Concurrent({Ran("db1", kBase, kSecond), Ran("db2", kBase + 20 * kMs, kSecond),
                                Ran("db3", kBase + 5 * kMs, kSecond)}));
  EXPECT_EQ(v.verdict, PhaseValidity::Verdict::kInvalid);
  EXPECT_THAT(v.why, HasSubstr("start spread 20.0 ms +-0 ns is 2% of the shortest host's "
                               "1.00 s (limit 1%): db2 started last, 20.0 ms after db1"));
  EXPECT_THAT(ValidityLines(v), StartsWith("  validity: INVALID: start spread"));
}

TEST(JudgeValidity, ThePlansLimitDecides) {
  const PhaseOutcome outcome =
      Concurrent({Ran("db1", kBase, kSecond), Ran("db2", kBase + 20 * kMs, kSecond)}, 0.05);
  EXPECT_EQ(JudgeValidity(outcome).verdict, PhaseValidity::Verdict::kValid);
}

TEST(JudgeValidity, TheShortestHostSetsTheScale) {
  // 20 ms is 0.2% of db1's 10 s but 2% of db2's 1 s.
  const PhaseValidity v = JudgeValidity(
      Concurrent({Ran("db1", kBase, 10 * kSecond), Ran("db2", kBase + 20 * kMs, kSecond)}));
  EXPECT_EQ(v.verdict, PhaseValidity::Verdict::kInvalid) << v.why;
  EXPECT_EQ(v.shortest_nanos, kSecond);
}

TEST(JudgeValidity, AHostThatStartedAfterAnotherFinishedIsInvalid) {
  // db2 was stopped until db1 had finished: each figure is fine, their sum is no fleet's.
  const PhaseValidity v = JudgeValidity(
      Concurrent({Ran("db1", kBase, kSecond), Ran("db2", kBase + 5 * kSecond, kSecond)}));
  EXPECT_EQ(v.verdict, PhaseValidity::Verdict::kInvalid);
  EXPECT_EQ(v.why, "db2 started 4.00 s after db1 had finished: the hosts never ran together");
  EXPECT_EQ(v.window_nanos, 0);
  EXPECT_EQ(v.window_bytes, 0u);
  // No window, so no line about one.
  EXPECT_THAT(ValidityLines(v), Not(HasSubstr("ran together for")));
}

TEST(JudgeValidity, AClockTooPoorToSayIsInvalidEvenWithNoMeasuredSpread) {
  // The starts look simultaneous, but the clocks are good to +-15 ms each on a 1 s phase.
  const PhaseValidity v = JudgeValidity(Concurrent(
      {Ran("db1", kBase, kSecond, 0, 15 * kMs), Ran("db2", kBase, kSecond, 0, 15 * kMs)}));
  EXPECT_EQ(v.verdict, PhaseValidity::Verdict::kInvalid);
  EXPECT_THAT(v.why, StartsWith("the clock estimate is good to +-30.0 ms only, more than 1% of "
                                "the shortest host's 1.00 s: too poor to say"));
  // Nor can it say when they all ran.
  EXPECT_TRUE(v.clock_too_poor);
  EXPECT_THAT(ValidityLines(v), Not(HasSubstr("ran together for")));
}

TEST(JudgeValidity, StartsAreComparedOnTheControllersClock) {
  // db2's clock is 3 s ahead; the agents' own start stamps differ by 3 s, the starts do not.
  const PhaseValidity v = JudgeValidity(
      Concurrent({Ran("db1", kBase, kSecond), Ran("db2", kBase + kMs, kSecond, 3 * kSecond)}));
  EXPECT_EQ(v.verdict, PhaseValidity::Verdict::kValid) << v.why;
  EXPECT_EQ(v.spread_nanos, kMs);
}

TEST(JudgeValidity, WithoutASeriesTheWindowIsProRataAndSaysSo) {
  const PhaseValidity v = JudgeValidity(
      Concurrent({Ran("db1", kBase, kSecond), Ran("db2", kBase + 5 * kMs, kSecond, 0, 0, false)}));
  EXPECT_EQ(v.window_nanos, 995 * kMs);
  EXPECT_TRUE(v.window_estimated);
  EXPECT_THAT(ValidityLines(v), HasSubstr("(pro rata: a host sent no complete series)"));
}

TEST(JudgeValidity, OneHostOrHostsOneAfterAnotherAreNotJudged) {
  EXPECT_FALSE(JudgeValidity(Concurrent({Ran("db1", kBase, kSecond)})).judged());
  PhaseOutcome sequential =
      Concurrent({Ran("db1", kBase, kSecond), Ran("db2", kBase + 5 * kSecond, kSecond)});
  sequential.mode = RunMode::kSequential;
  const PhaseValidity v = JudgeValidity(sequential);
  EXPECT_FALSE(v.judged());
  EXPECT_EQ(v.why, "the hosts ran one after another");
  EXPECT_EQ(ValidityLines(v), "");
}

TEST(JudgeValidity, OnlyHostsThatSucceededAreJudged) {
  // db2 failed late; the aggregate holds db1 and db3, which started together.
  HostOutcome failed = Ran("db2", kBase + 5 * kSecond, kSecond);
  failed.result->set_state(PhaseResult::FAILED);
  const PhaseValidity v = JudgeValidity(
      Concurrent({Ran("db1", kBase, kSecond), failed, Ran("db3", kBase + kMs, kSecond)}));
  EXPECT_EQ(v.verdict, PhaseValidity::Verdict::kValid) << v.why;
  EXPECT_EQ(v.hosts, 2);
}

TEST(Summarize, AnInvalidAggregateIsMarkedAndSaysWhyFirst) {
  const PhaseSummary s =
      Summarize(Concurrent({Ran("db1", kBase, kSecond), Ran("db2", kBase + 5 * kSecond, kSecond)}));
  ASSERT_TRUE(s.all_hosts.has_value());
  EXPECT_TRUE(s.all_hosts->invalid);
  ASSERT_FALSE(s.all_hosts->warnings.empty());
  EXPECT_EQ(s.all_hosts->warnings[0],
            "INVALID: db2 started 4.00 s after db1 had finished: the hosts never ran together");
  EXPECT_FALSE(s.rows[0].invalid);
}

// A phase read back before it had ended (its controller was killed): the hosts that had
// reported are not the fleet, in any mode, with one host or all of them in.
TEST(JudgeValidity, APhaseThatHadNotEndedIsInvalidWhateverItsClocks) {
  HostOutcome missing;
  missing.host = "db2";
  missing.error = "no result recorded: the phase had not ended";
  PhaseOutcome cut = Concurrent({Ran("db1", kBase, kSecond), missing});
  cut.ended = false;
  PhaseValidity v = JudgeValidity(cut);
  EXPECT_TRUE(v.invalid());
  EXPECT_EQ(v.why,
            "the phase had not ended when it was recorded (its controller stopped, or it still "
            "runs): 1 of 2 hosts had reported");
  EXPECT_THAT(ValidityLines(v), StartsWith("  validity: INVALID: the phase had not ended"));
  // Every result in, but the phase never ended (its closing clocks were not taken).
  PhaseOutcome all_in = Concurrent({Ran("db1", kBase, kSecond), Ran("db2", kBase, kSecond)});
  all_in.ended = false;
  EXPECT_TRUE(JudgeValidity(all_in).invalid());
  const PhaseSummary summary = Summarize(cut);
  ASSERT_TRUE(summary.all_hosts.has_value());
  EXPECT_TRUE(summary.all_hosts->invalid);
  EXPECT_THAT(summary.all_hosts->warnings[0], StartsWith("INVALID: the phase had not ended"));
  // One after another: the mean of the hosts that had reported is no mean of the fleet either.
  cut.mode = RunMode::kSequential;
  const PhaseSummary sequential = Summarize(cut);
  ASSERT_TRUE(sequential.all_hosts.has_value());
  EXPECT_EQ(sequential.all_hosts->host, "mean of hosts");
  EXPECT_TRUE(sequential.all_hosts->invalid);
  EXPECT_TRUE(sequential.validity.invalid());
  // Ended (every phase a controller runs itself): judged as before.
  all_in.ended = true;
  EXPECT_EQ(JudgeValidity(all_in).verdict, PhaseValidity::Verdict::kValid);
}

// Gives `host`'s series an uneven rate (sample k moves 1 + k % 7 MiB in 1 + k % 7 operations),
// with its totals to match, so that a window's share cannot come out right pro rata.
void Uneven(HostOutcome* host) {
  PhaseResult& r = *host->result;
  uint64_t ops = 0;
  for (int k = 0; k < r.series_size(); ++k) {
    auto* s = r.mutable_series(k);
    s->set_ops(1 + k % 7);
    s->set_bytes(s->ops() << 20);
    ops += s->ops();
  }
  r.set_ops(ops);
  r.set_bytes(ops << 20);
}

// A phase as `stormark run` holds it once the results database has its rows: every series
// dropped from memory (into `stored`, by host index) and the results marked trimmed.
PhaseOutcome Trimmed(PhaseOutcome outcome,
                     std::vector<std::pair<size_t, stormark::v1::IntervalSample>>* stored) {
  for (size_t h = 0; h < outcome.hosts.size(); ++h) {
    HostOutcome& host = outcome.hosts[h];
    if (!host.result) continue;
    for (const auto& s : host.result->series()) stored->emplace_back(h, s);
    host.own_series_samples = host.result->series_size();
    host.result->clear_series();
    host.result_trimmed = true;
  }
  // The store hands the rows back in its own order.
  std::reverse(stored->begin(), stored->end());
  return outcome;
}

TEST(ShareWindow, TheStoredSeriesGiveTheWindowOfTheSeriesInMemory) {
  // db2 starts 3 ms late on a clock 2 s ahead and stops 300 ms early, so the window begins and
  // ends inside samples of the others; db3's series misses a sample: it is pro rata both ways.
  HostOutcome db1 = Ran("db1", kBase, kSecond);
  HostOutcome db2 = Ran("db2", kBase + 3 * kMs, 700 * kMs + 7 * kMs, 2 * kSecond);
  HostOutcome db3 = Ran("db3", kBase + kMs, kSecond);
  Uneven(&db1);
  Uneven(&db2);
  db3.result->mutable_series()->RemoveLast();
  const PhaseOutcome whole = Concurrent({db1, db2, db3}, 0.05);
  const PhaseValidity want = JudgeValidity(whole);
  ASSERT_EQ(want.window_nanos, 707 * kMs);
  ASSERT_TRUE(want.window_estimated);  // db3

  std::vector<std::pair<size_t, stormark::v1::IntervalSample>> stored;
  PhaseOutcome trimmed = Trimmed(whole, &stored);
  // Without the stored series, db1's and db2's parts are pro rata too, and come out otherwise.
  EXPECT_NE(JudgeValidity(trimmed).window_bytes, want.window_bytes);

  auto read = [&stored](const SeriesSampleFn& sample) {
    for (const auto& [h, s] : stored) sample(h, s);
    return absl::OkStatus();
  };
  ASSERT_TRUE(ShareWindow(&trimmed, read).ok());
  const PhaseValidity got = JudgeValidity(trimmed);
  EXPECT_EQ(got.window_bytes, want.window_bytes);
  EXPECT_EQ(got.window_ops, want.window_ops);
  EXPECT_EQ(got.window_estimated, want.window_estimated);
  EXPECT_EQ(ValidityLines(got), ValidityLines(want));
  EXPECT_TRUE(trimmed.hosts[0].window_share.has_value());
  EXPECT_TRUE(trimmed.hosts[1].window_share.has_value());
  EXPECT_FALSE(trimmed.hosts[2].window_share.has_value());  // Its series is incomplete.
  // Every table after it (the summary row, the sweep's) reads the same window.
  EXPECT_EQ(Summarize(trimmed).validity.window_bytes, want.window_bytes);
}

TEST(ShareWindow, ASeriesThatCannotBeReadLeavesThePhaseProRata) {
  HostOutcome db1 = Ran("db1", kBase, kSecond);
  HostOutcome db2 = Ran("db2", kBase + 3 * kMs, 707 * kMs);
  Uneven(&db1);
  std::vector<std::pair<size_t, stormark::v1::IntervalSample>> stored;
  PhaseOutcome trimmed = Trimmed(Concurrent({db1, db2}), &stored);
  const common::Status status = ShareWindow(&trimmed, [&stored](const SeriesSampleFn& sample) {
    sample(stored[0].first, stored[0].second);  // Half a read, then the disk fails.
    return absl::DataLossError("disk I/O error");
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_FALSE(trimmed.hosts[0].window_share.has_value());
  EXPECT_FALSE(trimmed.hosts[1].window_share.has_value());
  EXPECT_TRUE(JudgeValidity(trimmed).window_estimated);
  // Rows deleted under the run: not taken for a series the host sent incomplete.
  stored.pop_back();
  const common::Status short_read = ShareWindow(&trimmed, [&stored](const SeriesSampleFn& sample) {
    for (const auto& [h, s] : stored) sample(h, s);
    return absl::OkStatus();
  });
  EXPECT_EQ(short_read.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(short_read.message(),
            "9 samples of host db1's series are stored, where its result had 10");
  EXPECT_FALSE(trimmed.hosts[1].window_share.has_value());
  // A store row of a host the phase has not is no crash.
  EXPECT_TRUE(ShareWindow(&trimmed, [&stored, &db1](const SeriesSampleFn& sample) {
                for (const auto& [h, s] : stored) sample(h, s);
                sample(0, db1.result->series(0));
                sample(7, stored[0].second);
                return absl::OkStatus();
              }).ok());
  EXPECT_TRUE(trimmed.hosts[0].window_share.has_value());
  EXPECT_FALSE(trimmed.hosts[1].window_share.has_value());  // 80 ops in its series, 70 in all.
}

// Nothing was dropped (no results database): nothing is read.
TEST(ShareWindow, APhaseWithItsSeriesInMemoryReadsNothing) {
  PhaseOutcome outcome = Concurrent({Ran("db1", kBase, kSecond), Ran("db2", kBase, kSecond)});
  bool read = false;
  EXPECT_TRUE(ShareWindow(&outcome, [&read](const SeriesSampleFn&) {
                read = true;
                return absl::OkStatus();
              }).ok());
  EXPECT_FALSE(read);
}

TEST(ParseStartSpreadLimit, TakesAShareAndRefusesAnythingElse) {
  EXPECT_DOUBLE_EQ(*ParseStartSpreadLimit("1%"), 0.01);
  EXPECT_DOUBLE_EQ(*ParseStartSpreadLimit("0.5%"), 0.005);
  EXPECT_DOUBLE_EQ(*ParseStartSpreadLimit("100%"), 1.0);
  for (const char* bad : {"2", "0%", "-1%", "101%", "%", "one%", "1%%", "nan%", ""}) {
    auto parsed = ParseStartSpreadLimit(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().message(), std::string("bad start_spread_limit '") + bad +
                                             "': give a share of the phase, such as 1%");
  }
}

}  // namespace
}  // namespace stormark::controller
