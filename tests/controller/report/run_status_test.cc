#include "controller/report/run_status.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

RunRecord TwoPhases() {
  return MakeRun("r1", {"db1", "db2"},
                 {Phase(WritePlan("a"), {SucceededHost("db1", 100), SucceededHost("db2", 100)}),
                  Phase(WritePlan("b"), {SucceededHost("db1", 100), SucceededHost("db2", 100)})});
}

TEST(StatusOf, EveryHostInEveryPhaseIsComplete) {
  const RunStatus status = StatusOf(TwoPhases());
  EXPECT_EQ(status.status, "complete");
  EXPECT_TRUE(status.reasons.empty());
  EXPECT_EQ(FormatRunStatus(status), "status: complete\n");
}

TEST(StatusOf, AFailedHostHookAndSkippedPointMakeItPartialInRunOrder) {
  RunRecord run = TwoPhases();
  run.phases[1].hosts[1] = UnreachableHost("db2");
  HookOutcome hook;
  hook.before_phase = 1;
  hook.what = "setup";
  hook.line = "mkfs -Q /dev/x";
  hook.point = "bs=4k";
  hook.hosts = 2;
  hook.failures = {{"db1", "command exited with status 1: unknown option -Q ... usage"}};
  run.hooks.push_back(hook);
  run.skipped_points.push_back({1, "bs=4k"});
  const RunStatus status = StatusOf(run);
  EXPECT_EQ(status.status, "partial");
  EXPECT_THAT(status.reasons,
              ElementsAre("setup `mkfs -Q /dev/x` failed on db1: command exited with status 1: "
                          "unknown option -Q ... usage",
                          "sweep point bs=4k: its phases were skipped (its setup failed)",
                          "phase b: db2 gave no result"));
  EXPECT_THAT(FormatRunStatus(status), HasSubstr("status: partial:\n  - setup `mkfs"));
}

TEST(StatusOf, EachSkippedPointFollowsTheSetupThatFailed) {
  RunRecord run;
  for (const char* point : {"bs=64k", "bs=1M"}) {
    HookOutcome hook;
    hook.what = "setup";
    hook.line = "false";
    hook.point = point;
    hook.hosts = 1;
    hook.failures = {{"db1", "exited with status 1"}};
    run.hooks.push_back(hook);
    run.skipped_points.push_back({0, point});
  }
  EXPECT_THAT(StatusOf(run).reasons,
              ElementsAre("setup `false` failed on db1: exited with status 1",
                          "sweep point bs=64k: its phases were skipped (its setup failed)",
                          "setup `false` failed on db1: exited with status 1",
                          "sweep point bs=1M: its phases were skipped (its setup failed)"));
}

TEST(StatusOf, AnInterruptWinsAndNothingSucceededIsFailed) {
  RunRecord run = TwoPhases();
  run.interrupted = true;
  EXPECT_EQ(StatusOf(run).status, "interrupted");
  RunRecord none = MakeRun("r2", {"db1"}, {Phase(WritePlan("a"), {UnreachableHost("db1")})});
  EXPECT_EQ(StatusOf(none).status, "failed");
  RunRecord empty;
  EXPECT_EQ(StatusOf(empty).status, "failed");
  EXPECT_THAT(StatusOf(empty).reasons, ElementsAre("no phase ran"));
}

TEST(StatusOf, AnAgentThatTookNoPartIsSaidOnce) {
  RunRecord run = TwoPhases();
  run.agents[1].error = "host db2: unreachable: connection refused";
  for (PhaseOutcome& phase : run.phases) phase.hosts[1] = UnreachableHost("db2");
  EXPECT_THAT(StatusOf(run).reasons, ElementsAre("db2: unreachable: connection refused"));
}

TEST(StatusOf, ReasonsStopAtTwentyAndSayHowManyMore) {
  RunRecord run = TwoPhases();
  for (int i = 0; i < 30; ++i) {
    HookOutcome hook;
    hook.what = "teardown";
    hook.line = "umount x";
    hook.before_phase = 2;
    hook.failures = {{"db1", "busy"}};
    run.hooks.push_back(hook);
  }
  const RunStatus status = StatusOf(run);
  ASSERT_EQ(status.reasons.size(), kMaxReasons + 1);
  EXPECT_EQ(status.reasons.back(), "... and 10 more");
}

TEST(FormatHookLine, OkFailedAndAfterAnInterrupt) {
  HookOutcome hook;
  hook.what = "setup";
  hook.line = "sync";
  hook.hosts = 2;
  hook.longest_nanos = 1'500'000'000;
  EXPECT_EQ(FormatHookLine(hook), "  setup `sync`: ok on 2 hosts (longest 1.50 s)\n");
  hook.what = "teardown";
  hook.after = "interrupt";
  hook.failures = {{"db2", "failed: umount: target is busy"}};
  EXPECT_EQ(FormatHookLine(hook),
            "  teardown `sync` after the interrupt (at most 60.0 s): FAILED\n"
            "  x db2: failed: umount: target is busy\n");
}

}  // namespace
}  // namespace stormark::controller
