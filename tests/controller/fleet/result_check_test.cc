#include "controller/fleet/result_check.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr uint64_t kUint64Max = std::numeric_limits<uint64_t>::max();
constexpr int64_t kNow = int64_t{1'796'650'000} * kSecond;  // 2026-12-07.

// What an honest agent sends for a 2 s phase of a randio job group: a series a second, a
// measurement per direction with its own series, a job and a thread.
stormark::v1::PhaseResult Honest() {
  stormark::v1::PhaseResult r;
  r.set_state(stormark::v1::PhaseResult::SUCCEEDED);
  r.set_bytes(uint64_t{2} << 30);
  r.set_ops(uint64_t{512} << 10);
  r.set_start_unix_nanos(kNow);
  r.set_end_unix_nanos(kNow + 2 * kSecond);
  r.set_elapsed_nanos(2 * kSecond);
  r.set_start_late_nanos(40'000);
  r.set_cpu_user_nanos(kSecond / 2);
  r.set_cpu_system_nanos(kSecond);
  r.set_first_done_nanos(2 * kSecond - 1000);
  r.set_last_done_nanos(2 * kSecond);
  r.set_first_done_bytes(r.bytes() - 4096);
  for (int i = 0; i < 2; ++i) {
    stormark::v1::IntervalSample* s = r.add_series();
    s->set_offset_nanos(i * kSecond);
    s->set_length_nanos(kSecond);
    s->set_bytes(r.bytes() / 2);
    s->set_ops(r.ops() / 2);
  }
  stormark::v1::Measurement* m = r.add_measurements();
  m->set_name("read");
  m->set_bytes(r.bytes());
  m->set_ops(r.ops());
  m->set_elapsed_nanos(2 * kSecond);
  *m->mutable_series() = r.series();
  *r.add_jobs()->add_measurements() = *m;
  *r.add_threads()->add_measurements() = *m;
  return r;
}

TEST(CheckResult, AnHonestResultPasses) {
  EXPECT_TRUE(CheckResult(Honest(), 2 * kSecond + kSecond / 10).ok());
  // An empty result (a phase that failed before it began) has nothing implausible either.
  EXPECT_TRUE(CheckResult(stormark::v1::PhaseResult(), 0).ok());
}

TEST(CheckResult, TheAgentsClockMayRunASecondAndOnePercentPastTheControllers) {
  stormark::v1::PhaseResult r;
  r.set_elapsed_nanos(kSecond + kSecond / 2);
  EXPECT_TRUE(CheckResult(r, kSecond / 2).ok());  // The stream's set-up on either side.
  r.set_elapsed_nanos(1000 * kSecond + 10 * kSecond + kSecond);
  EXPECT_TRUE(CheckResult(r, 1000 * kSecond).ok());  // And 1% of a long phase.
  r.set_elapsed_nanos(1000 * kSecond + 11 * kSecond + 1);
  EXPECT_THAT(CheckResult(r, 1000 * kSecond).message(),
              HasSubstr("elapsed_nanos is 1011000000001: longer than the 1000.000 s the "
                        "controller saw the phase's stream open"));
}

TEST(CheckResult, ANullTargetsRateIsPlausibleAndOneEiBPerSecondIsNot) {
  stormark::v1::PhaseResult r = Honest();
  r.clear_series();
  r.clear_measurements();
  r.clear_jobs();
  r.clear_threads();
  // 2 threads on a null target with 1 MiB blocks: 1.97 TiB/s; a thousand times that.
  r.set_bytes(uint64_t{4} << 50);
  r.set_ops(uint64_t{4} << 30);
  EXPECT_TRUE(CheckResult(r, 2 * kSecond).ok());
  r.set_bytes(uint64_t{4} << 60);  // 4 EiB within the 3.02 s the stream could have lasted.
  EXPECT_THAT(CheckResult(r, 2 * kSecond).message(),
              HasSubstr("bytes is 4611686018427387904: past 1 EiB/s over the phase"));
}

struct Hostile {
  std::string what;
  std::function<void(stormark::v1::PhaseResult&)> make;
  std::string said;
};

TEST(CheckResult, EachImplausibleFigureIsNamedWithItsValue) {
  const std::vector<Hostile> cases = {
      {"elapsed", [](auto& r) { r.set_elapsed_nanos(kInt64Max); },
       "elapsed_nanos is 9223372036854775807: longer than the 2.000 s"},
      {"negative elapsed", [](auto& r) { r.set_elapsed_nanos(-1); },
       "elapsed_nanos is -1: negative"},
      {"start", [](auto& r) { r.set_start_unix_nanos(kInt64Min); },
       "start_unix_nanos is -9223372036854775808: not an instant between 1970 and 2116"},
      {"end", [](auto& r) { r.set_end_unix_nanos(kInt64Max); },
       "end_unix_nanos is 9223372036854775807: not an instant"},
      {"late", [](auto& r) { r.set_start_late_nanos(kInt64Min); },
       "start_late_nanos is -9223372036854775808: further than 2116 is from 1970"},
      {"cpu", [](auto& r) { r.set_cpu_system_nanos(kInt64Max); },
       "cpu_system_nanos is 9223372036854775807: more than 8192 CPUs"},
      {"negative cpu", [](auto& r) { r.set_cpu_user_nanos(-5); }, "cpu_user_nanos is -5: negative"},
      {"ops", [](auto& r) { r.set_ops(kUint64Max); },
       "ops is 18446744073709551615: past 2^40 operations a second"},
      {"first done", [](auto& r) { r.set_first_done_nanos(-3); }, "first_done_nanos is -3"},
      {"last done", [](auto& r) { r.set_last_done_nanos(kInt64Max); }, "last_done_nanos is"},
      {"first done bytes", [](auto& r) { r.set_first_done_bytes(kUint64Max); },
       "first_done_bytes is 18446744073709551615"},
      {"series offset", [](auto& r) { r.mutable_series(1)->set_offset_nanos(-kSecond); },
       "series[1].offset_nanos is -1000000000: negative"},
      {"series length", [](auto& r) { r.mutable_series(0)->set_length_nanos(kInt64Max); },
       "series[0].length_nanos is 9223372036854775807"},
      {"series bytes", [](auto& r) { r.mutable_series(1)->set_bytes(kUint64Max); },
       "series[1].bytes is 18446744073709551615"},
      {"measurement", [](auto& r) { r.mutable_measurements(0)->set_elapsed_nanos(kInt64Min); },
       "measurements[0].elapsed_nanos is -9223372036854775808"},
      {"measurement series",
       [](auto& r) { r.mutable_measurements(0)->mutable_series(1)->set_offset_nanos(kInt64Max); },
       "measurements[0].series[1].offset_nanos is 9223372036854775807"},
      {"job", [](auto& r) { r.mutable_jobs(0)->mutable_measurements(0)->set_ops(kUint64Max); },
       "jobs[0].measurements[0].ops is 18446744073709551615"},
      {"thread series",
       [](auto& r) {
         r.mutable_threads(0)->mutable_measurements(0)->mutable_series(0)->set_length_nanos(-1);
       },
       "threads[0].measurements[0].series[0].length_nanos is -1"},
  };
  for (const Hostile& c : cases) {
    stormark::v1::PhaseResult r = Honest();
    c.make(r);
    const common::Status s = CheckResult(r, 2 * kSecond);
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_THAT(s.message(), HasSubstr(c.said)) << c.what;
  }
}

TEST(CheckResult, OnlyTheFirstImplausibleFigureIsSaid) {
  stormark::v1::PhaseResult r = Honest();
  r.set_elapsed_nanos(-1);
  r.mutable_series(0)->set_offset_nanos(-1);
  EXPECT_EQ(CheckResult(r, 2 * kSecond).message(), "elapsed_nanos is -1: negative");
}

TEST(CheckStoredResult, ARunsLengthWithAnHourForItsWallClockBoundsTheResult) {
  // A 2 s result in a run of 2 s, and in one whose wall clock stepped back 50 min meanwhile.
  EXPECT_TRUE(CheckStoredResult(Honest(), 2 * kSecond, "the run lasted").ok());
  EXPECT_TRUE(CheckStoredResult(Honest(), -50 * 60 * kSecond, "the run lasted").ok());
  stormark::v1::PhaseResult r = Honest();
  r.set_elapsed_nanos(int64_t{2} * 3600 * kSecond);
  EXPECT_EQ(CheckStoredResult(r, 2 * kSecond, "the run lasted").message(),
            "elapsed_nanos is 7200000000000: longer than the 2.000 s the run lasted");
  r = Honest();
  r.mutable_series(1)->set_length_nanos(kInt64Max);
  EXPECT_THAT(CheckStoredResult(r, kInt64Max, "the run lasted").message(),
              HasSubstr("series[1].length_nanos is 9223372036854775807"));
}

TEST(CheckProgress, AnHonestProgressPassesAndEachImplausibleFigureIsNamed) {
  stormark::v1::RunUpdate::Progress p;
  p.set_elapsed_nanos(kSecond);
  p.set_bytes(uint64_t{1} << 30);
  p.set_ops(uint64_t{256} << 10);
  EXPECT_TRUE(CheckProgress(p, kSecond).ok());
  // The first progress of a phase that has moved nothing yet.
  EXPECT_TRUE(CheckProgress(stormark::v1::RunUpdate::Progress(), 0).ok());

  stormark::v1::RunUpdate::Progress late = p;
  late.set_elapsed_nanos(3 * kSecond);
  EXPECT_EQ(CheckProgress(late, kSecond).message(),
            "elapsed_nanos is 3000000000: longer than the 1.000 s the controller saw the "
            "phase's stream open");
  stormark::v1::RunUpdate::Progress negative = p;
  negative.set_elapsed_nanos(kInt64Min);
  EXPECT_THAT(CheckProgress(negative, kSecond).message(), HasSubstr("negative"));
  stormark::v1::RunUpdate::Progress bytes = p;
  bytes.set_bytes(kUint64Max);
  EXPECT_THAT(CheckProgress(bytes, kSecond).message(),
              HasSubstr("bytes is 18446744073709551615: past 1 EiB/s"));
  stormark::v1::RunUpdate::Progress ops = p;
  ops.set_ops(kUint64Max);
  EXPECT_THAT(CheckProgress(ops, kSecond).message(),
              HasSubstr("ops is 18446744073709551615: past 2^40 operations"));
}

TEST(CheckClockReading, AnInstantBetween1970And2116Passes) {
  EXPECT_TRUE(CheckClockReading(kNow, kNow + 1000).ok());
  EXPECT_TRUE(CheckClockReading(0, 0).ok());  // A host whose clock was never set reads 1970.
  // A reply sent before its request arrived is a step of the agent's clock: it only widens the
  // round trip, and the sample is used or not on that.
  EXPECT_TRUE(CheckClockReading(kNow, kNow - kSecond).ok());
}

TEST(CheckClockReading, AnInstantOutsideThemIsNamed) {
  EXPECT_EQ(CheckClockReading(kInt64Min, kNow).message(),
            "agent_receive_unix_nanos is -9223372036854775808: not an instant between 1970 and "
            "2116");
  EXPECT_EQ(CheckClockReading(kNow, kInt64Max).message(),
            "agent_send_unix_nanos is 9223372036854775807: not an instant between 1970 and 2116");
  EXPECT_FALSE(CheckClockReading(kLatestPlausibleUnixNanos + 1, kNow).ok());
}

}  // namespace
}  // namespace stormark::controller
