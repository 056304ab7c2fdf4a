#include "agent/targets/dir/dir_target.h"
#include "agent/workloads/command/command.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using stormark::v1::CommandSpec;
using ::testing::HasSubstr;
using ::testing::Not;

CommandSpec Shell(const std::string& line) {
  CommandSpec spec;
  spec.set_shell(line);
  return spec;
}

CommandPolicy Enabled() {
  CommandPolicy policy;
  policy.enabled = true;
  return policy;
}

class CommandWorkloadTest : public TempDirTest {
 protected:
  std::unique_ptr<CommandWorkload> Make(const CommandSpec& spec, CommandPolicy policy = Enabled()) {
    auto target = OpenPhaseDir(ConfigWithTarget().targets[0], "phase1");
    EXPECT_TRUE(target.ok()) << target.status();
    if (!target.ok()) return nullptr;
    phase_dir_ = (*target)->Describe("");
    return std::make_unique<CommandWorkload>(spec, std::move(*target),
                                             ConfigWithTarget().targets[0], std::move(policy));
  }

  // Prepare, Run and AddToResult; the Run status.
  common::Status PrepareAndRun(CommandWorkload& workload, stormark::v1::PhaseResult* result) {
    std::vector<std::string> warnings;
    RETURN_IF_ERROR(workload.Prepare(cancelled_, &warnings));
    common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
    TimedRegion region(common::SystemClock(), recorders);
    RunContext ctx{common::SystemClock(), cancelled_, recorders, region};
    common::Status status = workload.Run(ctx);
    workload.AddToResult(result);
    ops_ = recorders.TotalOps();
    return status;
  }

  static const stormark::v1::Measurement* Command(const stormark::v1::PhaseResult& result) {
    for (const auto& m : result.measurements()) {
      if (m.name() == "command") return &m;
    }
    return nullptr;
  }

  std::atomic<bool> cancelled_{false};
  std::string phase_dir_;
  uint64_t ops_ = 0;
};

TEST_F(CommandWorkloadTest, RefusedUnlessTheConfigEnablesCommands) {
  auto workload = Make(Shell("true"), CommandPolicy());
  std::vector<std::string> warnings;
  const common::Status status = workload->Prepare(cancelled_, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()), HasSubstr("commands: {enabled: true}"));
}

TEST_F(CommandWorkloadTest, AllowListRefusesOtherProgramsAndTheShell) {
  CommandPolicy policy = Enabled();
  policy.allow = {*MakeCommandRule({"true"})};
  CommandSpec spec;
  spec.add_argv("false");
  std::vector<std::string> warnings;
  common::Status status = Make(spec, policy)->Prepare(cancelled_, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()), HasSubstr("commands.allow"));

  status = Make(Shell("true"), policy)->Prepare(cancelled_, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()), HasSubstr("[sh, -c, LINE]"));

  spec.set_argv(0, "true");
  EXPECT_TRUE(Make(spec, policy)->Prepare(cancelled_, &warnings).ok());
  spec.add_argv("x");
  status = Make(spec, policy)->Prepare(cancelled_, &warnings);
  EXPECT_THAT(std::string(status.message()), HasSubstr("argv[1] x is more than rule [true] takes"));
}

TEST_F(CommandWorkloadTest, RunsAsTheCommandUserInAPhaseDirectoryItOwns) {
  if (geteuid() != 0 || getpwnam("nobody") == nullptr) GTEST_SKIP() << "needs root and nobody";
  const uid_t nobody = getpwnam("nobody")->pw_uid;
  const std::string victim = dir() + "/victim";
  std::ofstream(victim) << "precious";
  ASSERT_EQ(chmod(victim.c_str(), 0666), 0);  // Only the way to it stands in between.
  auto workload =
      Make(Shell("id -u; stat -c %u .; echo x > mine; "
                 "echo spoiled > \"$STORMARK_TARGET_DIR/victim\" || echo refused"));
  stormark::v1::PhaseResult result;
  ASSERT_TRUE(PrepareAndRun(*workload, &result).ok()) << result.resolved().at("stderr_tail");
  EXPECT_EQ(result.resolved().at("stdout_tail"),
            std::to_string(nobody) + "\n" + std::to_string(nobody) + "\nrefused\n");
  EXPECT_EQ(result.resolved().at("user"), "nobody");
  std::ifstream in(victim);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious");
  // Only the phase directory was given away: its parent is still root's.
  struct stat st;
  ASSERT_EQ(stat(dir().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_GE(workload->Cleanup().removed, 2);
  EXPECT_EQ(ListDir(dir()), std::vector<std::string>{"victim"});
}

TEST_F(CommandWorkloadTest, ACommandDeniedAsAnotherUserSaysRootIsNeeded) {
  if (geteuid() != 0 || getpwnam("nobody") == nullptr) GTEST_SKIP() << "needs root and nobody";
  CommandSpec spec = Shell("echo 'mount: /mnt: must be superuser to use mount.' >&2; exit 32");
  spec.set_hook(true);
  CommandWorkload hook(spec, nullptr, ConfigWithTarget().targets[0], Enabled());
  stormark::v1::PhaseResult result;
  const common::Status status = PrepareAndRun(hook, &result);
  EXPECT_EQ(status.message(),
            "command exited with status 32: mount: /mnt: must be superuser to use mount. (the "
            "hook ran as user 'nobody'; hooks that format or mount filesystems need "
            "'commands.user: root' in the agent's config)");

  CommandPolicy as_root = Enabled();
  as_root.user = "root";
  CommandWorkload root_hook(spec, nullptr, ConfigWithTarget().targets[0], as_root);
  EXPECT_EQ(PrepareAndRun(root_hook, &result).message(),
            "command exited with status 32: mount: /mnt: must be superuser to use mount.");
  EXPECT_EQ(result.resolved().at("user"), "root");
}

TEST_F(CommandWorkloadTest, RunsInThePhaseDirectoryAndMeasuresTheChild) {
  auto workload = Make(Shell("pwd; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"));
  stormark::v1::PhaseResult result;
  ASSERT_TRUE(PrepareAndRun(*workload, &result).ok());
  const stormark::v1::Measurement* m = Command(result);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(result.resolved().at("stdout_tail"), phase_dir_ + "\n");
  EXPECT_EQ(result.resolved().at("exit_status"), "exited with status 0");
  EXPECT_GT(m->elapsed_nanos(), 0);
  // The CPU is the command's (a shell loop), not the agent's.
  EXPECT_GT(m->cpu_user_nanos(), 20'000'000);
  EXPECT_LE(m->cpu_user_nanos() + m->cpu_system_nanos(), m->elapsed_nanos() + 10'000'000);
  EXPECT_EQ(ops_, 1u);
}

TEST_F(CommandWorkloadTest, SyncIsInsideTheTimedRegion) {
  CommandSpec spec = Shell("head -c 8388608 /dev/urandom > data");
  spec.set_sync(true);
  auto workload = Make(spec);
  stormark::v1::PhaseResult result;
  ASSERT_TRUE(PrepareAndRun(*workload, &result).ok());
  const int64_t sync_nanos = std::stoll(result.resolved().at("sync_nanos"));
  EXPECT_GT(sync_nanos, 0);
  EXPECT_GE(Command(result)->elapsed_nanos(), sync_nanos);
}

TEST_F(CommandWorkloadTest, AFailedCommandFailsThePhaseWithItsStatusAndOutput) {
  auto workload = Make(Shell("echo first >&2; echo 'disk full' >&2; exit 4"));
  stormark::v1::PhaseResult result;
  const common::Status status = PrepareAndRun(*workload, &result);
  ASSERT_FALSE(status.ok());
  EXPECT_FALSE(absl::IsCancelled(status));
  // Its first line and its last: where a tool says what went wrong, and where it ends.
  EXPECT_EQ(status.message(), "command exited with status 4: first ... disk full");
  EXPECT_EQ(ops_, 0u);  // Never a timing.
  EXPECT_EQ(result.resolved().at("stderr_tail"), "first\ndisk full\n");
}

TEST_F(CommandWorkloadTest, AnErrorBeforeALongUsageTextIsKeptInTheMessage) {
  // As mkfs.xfs does: the error, then more usage than the 4 KiB tail keeps.
  auto workload = Make(Shell(
      "echo 'unknown option -Q' >&2; for i in $(seq 300); do echo \"usage line $i\" >&2; done;"
      " exit 1"));
  stormark::v1::PhaseResult result;
  const common::Status status = PrepareAndRun(*workload, &result);
  EXPECT_EQ(status.message(), "command exited with status 1: unknown option -Q ... usage line 300");
  EXPECT_THAT(result.resolved().at("stderr_tail"), Not(HasSubstr("unknown option")));
}

TEST_F(CommandWorkloadTest, OneLineOfStderrIsNotRepeated) {
  auto workload = Make(Shell("echo 'disk full' >&2; exit 4"));
  stormark::v1::PhaseResult result;
  EXPECT_EQ(PrepareAndRun(*workload, &result).message(), "command exited with status 4: disk full");
}

TEST_F(CommandWorkloadTest, ATimeoutFailsThePhase) {
  CommandSpec spec = Shell("sleep 30");
  spec.set_timeout_ms(200);
  auto workload = Make(spec);
  stormark::v1::PhaseResult result;
  const common::Status status = PrepareAndRun(*workload, &result);
  EXPECT_THAT(std::string(status.message()), HasSubstr("timed out after 0.2 s"));
  EXPECT_EQ(ops_, 0u);
}

TEST_F(CommandWorkloadTest, CleanupRemovesWhatTheCommandLeftButNotWhatALinkPointsTo) {
  const std::string outside = dir() + "/outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0700), 0);
  std::ofstream(outside + "/keep") << "precious";
  auto workload = Make(Shell("mkdir -p a/b/c && echo x > a/b/c/f && echo y > g && ln -s " +
                             outside + " link && ln -s " + outside + "/keep a/keeplink"));
  stormark::v1::PhaseResult result;
  ASSERT_TRUE(PrepareAndRun(*workload, &result).ok());
  EXPECT_GE(workload->Cleanup().removed, 7);
  struct stat st;
  EXPECT_NE(stat(phase_dir_.c_str(), &st), 0);
  EXPECT_EQ(stat((outside + "/keep").c_str(), &st), 0);
}

TEST_F(CommandWorkloadTest, AHookIsToldItsHostsTargetDeviceNeverAGuess) {
  CommandSpec spec = Shell(
      "echo \"$STORMARK_TARGET|$STORMARK_TARGET_DEVICE|$STORMARK_TARGET_MOUNTED|$STORMARK_HOST\"; "
      "test -n \"$STORMARK_TARGET_FS\"");
  spec.set_hook(true);
  TargetConfig configured = ConfigWithTarget().targets[0];
  configured.device = "/dev/loop7";
  CommandWorkload hook(spec, nullptr, configured, Enabled());
  stormark::v1::PhaseResult result;
  ASSERT_TRUE(PrepareAndRun(hook, &result).ok()) << result.resolved().at("stderr_tail");
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  // A temporary directory is no mount point of its own.
  EXPECT_EQ(result.resolved().at("stdout_tail"),
            std::string("scratch|/dev/loop7|no|") + host + "\n");

  // Without `device:` in the config, the variable is empty: nothing is guessed.
  CommandWorkload unnamed(spec, nullptr, ConfigWithTarget().targets[0], Enabled());
  ASSERT_TRUE(PrepareAndRun(unnamed, &result).ok());
  EXPECT_EQ(result.resolved().at("stdout_tail"), std::string("scratch||no|") + host + "\n");
}

TEST_F(CommandWorkloadTest, AHookRunsInTheRootWithoutAPhaseDirectory) {
  CommandSpec spec = Shell("pwd; echo $STORMARK_TARGET_DIR");
  spec.set_hook(true);
  CommandWorkload hook(spec, nullptr, ConfigWithTarget().targets[0], Enabled());
  stormark::v1::PhaseResult result;
  ASSERT_TRUE(PrepareAndRun(hook, &result).ok());
  EXPECT_EQ(result.resolved().at("stdout_tail"), "/\n" + dir() + "\n");
  EXPECT_EQ(hook.Cleanup().removed, 0);
  EXPECT_TRUE(ListDir(dir()).empty());
}

}  // namespace
}  // namespace stormark::agent
