#include "agent/runner/run_result.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using stormark::v1::PhaseResult;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kSecond = 1'000'000'000;

// Two jobs, three 4 KiB operations in all.
void ThreeOps(common::RecorderSet& recorders) {
  common::Recorder* a = recorders.Add();
  common::Recorder* b = recorders.Add();
  a->Record(100'000'000, 50'000, 4096);
  a->Record(200'000'000, 70'000, 4096);
  b->Record(300'000'000, 90'000, 4096);
}

TEST(FillRunResult, ASuccessfulRunCarriesTheMergedFigures) {
  common::RecorderSet recorders(0);
  ThreeOps(recorders);
  PhaseResult result;
  FillRunResult(absl::OkStatus(), false, "", recorders, 0, 2 * kSecond, &result);
  EXPECT_EQ(result.state(), PhaseResult::SUCCEEDED);
  EXPECT_EQ(result.bytes(), 3 * 4096u);
  EXPECT_EQ(result.ops(), 3u);
  EXPECT_EQ(result.elapsed_nanos(), 2 * kSecond);
  EXPECT_THAT(result.warnings(), IsEmpty());
  EXPECT_EQ(result.error(), "");
}

TEST(FillRunResult, ARunUnderHalfASecondIsTooFastToTime) {
  common::RecorderSet recorders(0);
  ThreeOps(recorders);
  PhaseResult result;
  FillRunResult(absl::OkStatus(), false, "", recorders, 0, kTooFastNanos - 1, &result);
  EXPECT_EQ(result.state(), PhaseResult::SUCCEEDED);
  EXPECT_THAT(result.warnings(), ElementsAre(HasSubstr("too fast to time: finished in 0.500 s")));
  EXPECT_THAT(result.warnings(), ElementsAre(HasSubstr("; use a larger size")));
}

TEST(FillRunResult, TheTooFastWarningGivesTheWorkloadsHint) {
  common::RecorderSet recorders(0);
  ThreeOps(recorders);
  PhaseResult result;
  FillRunResult(absl::OkStatus(), false, "", recorders, 0, kTooFastNanos - 1, &result,
                "use a longer runtime");
  EXPECT_THAT(result.warnings(), ElementsAre(HasSubstr("(under 0.5 s); use a longer runtime")));
}

TEST(FillRunResult, ACancelledRunIsAbortedForItsReason) {
  common::RecorderSet recorders(0);
  ThreeOps(recorders);
  PhaseResult result;
  FillRunResult(absl::CancelledError("randio: cancelled"), true, "aborted by the controller",
                recorders, 0, kSecond, &result);
  EXPECT_EQ(result.state(), PhaseResult::ABORTED);
  EXPECT_EQ(result.error(), "aborted by the controller");
  EXPECT_EQ(result.ops(), 3u) << "the figures so far are kept";

  // Without a reason, the workload's own words.
  FillRunResult(absl::CancelledError("randio: cancelled"), false, "", recorders, 0, kSecond,
                &result);
  EXPECT_EQ(result.state(), PhaseResult::ABORTED);
  EXPECT_EQ(result.error(), "randio: cancelled");
}

TEST(FillRunResult, AnErrorFailsTheRunWithItsMessage) {
  common::RecorderSet recorders(0);
  ThreeOps(recorders);
  PhaseResult result;
  FillRunResult(absl::DataLossError("verify: 1 of 16384 units differ"), false, "", recorders, 0,
                kSecond, &result);
  EXPECT_EQ(result.state(), PhaseResult::FAILED);
  EXPECT_EQ(result.error(), "verify: 1 of 16384 units differ");
}

}  // namespace
}  // namespace stormark::agent
