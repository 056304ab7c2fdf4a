#include "controller/fleet/phase_deadline.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;

stormark::v1::PhaseSpec Stream() {
  stormark::v1::PhaseSpec spec;
  spec.mutable_stream()->set_size_bytes(1000);
  return spec;
}

TEST(PrepareDeadline, ThePlansPrepareDeadlineWins) {
  stormark::v1::PhaseSpec spec;
  spec.mutable_stream()->set_size_bytes(uint64_t{1} << 40);
  const PrepareDeadline limit(spec, 45 * kSecond);
  EXPECT_EQ(limit.limit_nanos, 45 * kSecond);
  EXPECT_EQ(limit.why, "its prepare_deadline");
}

TEST(PrepareDeadline, TheDefaultIsFiveMinutesPlusOneSecondPer16MiBOfTheFile) {
  stormark::v1::PhaseSpec bonnie;
  bonnie.mutable_bonnie();
  EXPECT_EQ(PrepareDeadline(bonnie, 0).limit_nanos, 300 * kSecond);
  stormark::v1::PhaseSpec stream;
  stream.mutable_stream()->set_size_bytes(uint64_t{1} << 30);
  const PrepareDeadline gib(stream, 0);
  EXPECT_EQ(gib.limit_nanos, (300 + 64) * kSecond);
  EXPECT_THAT(gib.why, HasSubstr("the default"));
  // A time-based randio still lays out its whole file first.
  stormark::v1::PhaseSpec randio;
  randio.mutable_randio()->set_size_bytes(uint64_t{16} << 30);
  randio.mutable_randio()->set_time_based(true);
  EXPECT_EQ(PrepareDeadline(randio, 0).limit_nanos, (300 + 1024) * kSecond);
}

TEST(PhaseDeadline, ThePlansDeadlineWins) {
  stormark::v1::PhaseSpec spec;
  spec.mutable_randio()->set_runtime_nanos(100 * kSecond);
  PhaseDeadline deadline(spec, 30 * kSecond, 0);
  EXPECT_EQ(deadline.Overdue(30 * kSecond), "");
  EXPECT_EQ(deadline.Overdue(31 * kSecond),
            "ran 31.0 s, past its deadline of 30.0 s (plan `deadline:`)");
}

TEST(PhaseDeadline, ARuntimeBoundPhaseMayRunTwiceItsRuntimePlusAMinute) {
  stormark::v1::PhaseSpec spec;
  spec.mutable_randio()->set_runtime_nanos(10 * kSecond);
  spec.mutable_randio()->set_ramp_time_nanos(5 * kSecond);
  PhaseDeadline deadline(spec, 0, 0);
  EXPECT_EQ(deadline.Overdue(90 * kSecond), "");
  EXPECT_THAT(deadline.Overdue(91 * kSecond), HasSubstr("expected end at 15.0 s"));
}

// fio's startdelay comes before the ramp and the runtime: the expected end counts it.
TEST(PhaseDeadline, AStartDelayIsPartOfTheExpectedEnd) {
  stormark::v1::PhaseSpec spec;
  spec.mutable_randio()->set_runtime_nanos(10 * kSecond);
  spec.mutable_randio()->set_startdelay_nanos(100 * kSecond);
  PhaseDeadline deadline(spec, 0, 0);
  EXPECT_EQ(deadline.Overdue(200 * kSecond), "");
  EXPECT_THAT(deadline.Overdue(281 * kSecond), HasSubstr("expected end at 110.0 s"));
}

TEST(PhaseDeadline, ASizeBoundPhaseHasNoDeadlineBeforeItMovesBytes) {
  PhaseDeadline deadline(Stream(), 0, 1000);
  deadline.Progress(5 * kSecond, 0);
  EXPECT_EQ(deadline.Overdue(10000 * kSecond), "");
}

TEST(PhaseDeadline, ASizeBoundPhaseThatStallsIsOverdueAtFourTimesItsRateEstimate) {
  PhaseDeadline deadline(Stream(), 0, 1000);
  deadline.Progress(1 * kSecond, 50);
  deadline.Progress(2 * kSecond, 100);  // 10 % in 2 s: the whole in 20 s.
  deadline.Progress(3 * kSecond, 100);  // Then nothing moves.
  deadline.Progress(60 * kSecond, 100);
  EXPECT_EQ(deadline.Overdue(140 * kSecond), "");  // 4 x 20 s + 60 s.
  EXPECT_THAT(deadline.Overdue(141 * kSecond), HasSubstr("expected end at 20.0 s"));
}

// The fleet sets each host's timer from LimitNanos: it must be the last moment Overdue is
// empty, whatever the progress so far.
TEST(PhaseDeadline, TheLimitIsTheLastMomentThePhaseIsNotOverdue) {
  PhaseDeadline fixed(Stream(), 60 * kSecond, 1000);
  ASSERT_EQ(fixed.LimitNanos(), 60 * kSecond);
  EXPECT_EQ(fixed.Overdue(60 * kSecond), "");
  EXPECT_NE(fixed.Overdue(60 * kSecond + 1), "");

  PhaseDeadline sized(Stream(), 0, 1000);
  EXPECT_EQ(sized.LimitNanos(), std::nullopt);  // No estimate before bytes move.
  sized.Progress(2 * kSecond, 100);             // The whole in 20 s: 140 s.
  ASSERT_EQ(sized.LimitNanos(), 140 * kSecond);
  EXPECT_EQ(sized.Overdue(140 * kSecond), "");
  EXPECT_NE(sized.Overdue(140 * kSecond + 1), "");
  // Faster since: the estimate, and with it the limit, comes nearer (4 x 10 s + 60 s).
  sized.Progress(6 * kSecond, 600);
  ASSERT_EQ(sized.LimitNanos(), 100 * kSecond);
  EXPECT_EQ(sized.Overdue(100 * kSecond), "");
  EXPECT_NE(sized.Overdue(100 * kSecond + 1), "");
  // Slower since: it moves on (4 x 30 s + 60 s).
  sized.Progress(21 * kSecond, 700);
  ASSERT_EQ(sized.LimitNanos(), 180 * kSecond);
  EXPECT_EQ(sized.Overdue(180 * kSecond), "");
  EXPECT_NE(sized.Overdue(180 * kSecond + 1), "");
}

// 16 TiB at 4 KiB in the first second estimates more nanoseconds than int64 holds: the limit
// saturates instead of wrapping round to a deadline in the past.
TEST(PhaseDeadline, AnEstimatePastWhatInt64HoldsSaturates) {
  PhaseDeadline deadline(Stream(), 0, uint64_t{16} << 40);
  deadline.Progress(1 * kSecond, 4096);
  EXPECT_EQ(deadline.LimitNanos(), INT64_MAX);
  EXPECT_EQ(deadline.Overdue(1000 * kSecond), "");
}

TEST(PhaseDeadline, AWorkloadWithNeitherSizeNorRuntimeHasNoDeadline) {
  stormark::v1::PhaseSpec spec;
  spec.mutable_command()->set_shell("sleep 1000");
  PhaseDeadline deadline(spec, 0, 0);
  deadline.Progress(1 * kSecond, 10);
  EXPECT_EQ(deadline.Overdue(100000 * kSecond), "");
  EXPECT_EQ(deadline.LimitNanos(), std::nullopt);
}

}  // namespace
}  // namespace stormark::controller
