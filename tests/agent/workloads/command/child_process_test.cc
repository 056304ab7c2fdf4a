#include "agent/workloads/command/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

class ChildProcessTest : public TempDirTest {
 protected:
  ChildExit RunShell(const std::string& line, int64_t timeout_nanos = 0) {
    ChildOptions options;
    options.program = "/bin/sh";
    options.argv = {"sh", "-c", line};
    options.cwd = dir();
    options.extra_env = {"STORMARK_TEST_VALUE=seen"};
    return Run(options, timeout_nanos);
  }

  ChildExit Run(const ChildOptions& options, int64_t timeout_nanos = 0) {
    auto child = ChildProcess::Start(options, clock_);
    EXPECT_TRUE(child.ok()) << child.status();
    if (!child.ok()) return ChildExit();
    const int64_t deadline = timeout_nanos == 0 ? 0 : clock_.MonotonicNanos() + timeout_nanos;
    return (*child)->Wait(deadline, cancelled_);
  }

  // Running, as opposed to gone or a zombie (which an init that does not reap leaves).
  static bool Alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text)) return false;
    const size_t paren = text.rfind(')');
    return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
  }

  const common::Clock& clock_ = common::SystemClock();
  std::atomic<bool> cancelled_{false};
};

TEST_F(ChildProcessTest, ReportsSuccessAndKeepsOutput) {
  const ChildExit exit = RunShell("echo out; echo err >&2; echo $STORMARK_TEST_VALUE; pwd");
  EXPECT_TRUE(exit.Succeeded());
  EXPECT_EQ(exit.Describe(), "exited with status 0");
  EXPECT_EQ(exit.stdout_tail, "out\nseen\n" + dir() + "\n");
  EXPECT_EQ(exit.stderr_tail, "err\n");
}

TEST_F(ChildProcessTest, ReportsExitStatusAndSignal) {
  ChildExit exit = RunShell("exit 3");
  EXPECT_FALSE(exit.Succeeded());
  EXPECT_EQ(exit.Describe(), "exited with status 3");
  exit = RunShell("kill -9 $$");
  EXPECT_FALSE(exit.Succeeded());
  EXPECT_THAT(exit.Describe(), HasSubstr("killed by signal 9"));
}

TEST_F(ChildProcessTest, KeepsOnlyTheTailOfLongOutput) {
  const ChildExit exit = RunShell("seq 1 100000; echo last");
  EXPECT_TRUE(exit.Succeeded());
  EXPECT_EQ(exit.stdout_tail.size(), 4096u);
  EXPECT_THAT(exit.stdout_tail, ::testing::EndsWith("100000\nlast\n"));
}

TEST_F(ChildProcessTest, StdinIsEmpty) {
  const ChildExit exit = RunShell("cat; echo done");
  EXPECT_TRUE(exit.Succeeded());
  EXPECT_EQ(exit.stdout_tail, "done\n");
}

TEST_F(ChildProcessTest, TimeoutKillsTheWholeProcessGroup) {
  // The grandchild writes its pid, then both sleep far past the timeout.
  const int64_t start = clock_.MonotonicNanos();
  const ChildExit exit = RunShell("sleep 60 & echo $! > grandchild.pid; sleep 60", 300'000'000);
  const int64_t took = clock_.MonotonicNanos() - start;
  EXPECT_EQ(exit.how, ChildExit::How::kTimedOut);
  EXPECT_FALSE(exit.Succeeded());
  EXPECT_LT(took, 5'000'000'000);
  std::ifstream in(dir() + "/grandchild.pid");
  pid_t grandchild = 0;
  in >> grandchild;
  ASSERT_GT(grandchild, 0);
  // The grandchild was killed; it is reaped by init, so give that a moment.
  for (int i = 0; i < 100 && Alive(grandchild); ++i) usleep(10'000);
  EXPECT_FALSE(Alive(grandchild));
}

TEST_F(ChildProcessTest, CancelKillsTheChild) {
  std::thread canceller([this] {
    usleep(200'000);
    cancelled_ = true;
  });
  const ChildExit exit = RunShell("sleep 60");
  canceller.join();
  EXPECT_EQ(exit.how, ChildExit::How::kCancelled);
}

TEST_F(ChildProcessTest, BackgroundLeftoversAreKilledAfterTheChildExits) {
  const ChildExit exit = RunShell("sleep 60 & echo $! > leftover.pid; exit 0");
  EXPECT_TRUE(exit.Succeeded());
  std::ifstream in(dir() + "/leftover.pid");
  pid_t leftover = 0;
  in >> leftover;
  ASSERT_GT(leftover, 0);
  for (int i = 0; i < 100 && Alive(leftover); ++i) usleep(10'000);
  EXPECT_FALSE(Alive(leftover));
}

TEST_F(ChildProcessTest, CpuOfTheChildIsReported) {
  const ChildExit exit = RunShell("i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done");
  ASSERT_TRUE(exit.Succeeded());
  const double user = exit.usage.ru_utime.tv_sec + exit.usage.ru_utime.tv_usec / 1e6;
  EXPECT_GT(user, 0.05);
}

// Root, and a user nobody to become.
std::optional<Credentials> Nobody() {
  if (geteuid() != 0) return std::nullopt;
  auto user = LookUpCommandUser("nobody");
  if (!user.ok()) return std::nullopt;
  return *user;
}

TEST_F(ChildProcessTest, TheChildBecomesTheUserForGood) {
  const std::optional<Credentials> nobody = Nobody();
  if (!nobody) GTEST_SKIP() << "needs root and a user nobody";
  ChildOptions options;
  options.program = "/bin/sh";
  // What the kernel says of the process that runs the program: its ids, its groups, no
  // capabilities, no way to gain privileges.
  options.argv = {"sh", "-c",
                  "id -u; id -g; id -G; echo $HOME $USER; "
                  "grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status | tr -s '\t' ' '"};
  options.cwd = "/";
  options.user = nobody;
  const ChildExit exit = Run(options);
  ASSERT_TRUE(exit.Succeeded()) << exit.Describe() << exit.stderr_tail;
  std::string groups;
  for (gid_t g : nobody->groups) groups += (groups.empty() ? "" : " ") + std::to_string(g);
  EXPECT_EQ(exit.stdout_tail, std::to_string(nobody->uid) + "\n" + std::to_string(nobody->gid) +
                                  "\n" + groups + "\n" + nobody->home + " nobody\n" +
                                  "CapPrm: 0000000000000000\nCapEff: 0000000000000000\n"
                                  "NoNewPrivs: 1\n");
}

TEST_F(ChildProcessTest, AsTheUserItStartsInADirectoryDescriptorAndSearchesPath) {
  const std::optional<Credentials> nobody = Nobody();
  if (!nobody) GTEST_SKIP() << "needs root and a user nobody";
  // Below dir() (0700, root's): nobody could not reach it by path.
  const std::string work = dir() + "/work";
  ASSERT_EQ(mkdir(work.c_str(), 0700), 0);
  ASSERT_EQ(chown(work.c_str(), nobody->uid, nobody->gid), 0);
  const int fd = open(work.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ChildOptions options;
  options.program = "sh";  // Found in PATH by the child.
  options.argv = {"sh", "-c", "touch made && pwd && ls \"$STORMARK_X\" 2>&1 >/dev/null | wc -l"};
  options.cwd = "(phase directory)";
  options.cwd_fd = fd;
  options.user = nobody;
  options.extra_env = {"STORMARK_X=" + dir()};
  const ChildExit exit = Run(options);
  close(fd);
  ASSERT_TRUE(exit.Succeeded()) << exit.Describe() << exit.stderr_tail;
  // It worked in `work`, and could not list the directory above it.
  EXPECT_EQ(exit.stdout_tail, work + "\n1\n");
  struct stat st;
  ASSERT_EQ(stat((work + "/made").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody->uid);
}

TEST_F(ChildProcessTest, NoDescriptorOfTheAgentIsInherited) {
  // Not close-on-exec, at a low number and above 1024 (a device the agent holds open).
  const int low = open("/dev/null", O_RDONLY);
  ASSERT_GE(low, 0);
  ASSERT_EQ(dup2(low, 1500), 1500);
  const ChildExit exit =
      RunShell("for fd in " + std::to_string(low) +
               " 1500; do [ -e /proc/self/fd/$fd ] && echo open $fd; done; echo done");
  close(low);
  close(1500);
  EXPECT_EQ(exit.stdout_tail, "done\n");
}

TEST_F(ChildProcessTest, AFailedSwitchNamesTheStep) {
  if (geteuid() == 0) GTEST_SKIP() << "needs a user other than root";
  Credentials other;
  other.name = "other";
  other.uid = geteuid() + 1;
  other.gid = getegid() + 1;
  other.groups = {other.gid};
  other.switch_user = true;
  ChildOptions options;
  options.program = "/bin/true";
  options.argv = {"true"};
  options.cwd = "/";
  options.user = other;
  auto child = ChildProcess::Start(options, clock_);
  ASSERT_FALSE(child.ok());
  EXPECT_THAT(std::string(child.status().message()),
              HasSubstr("as user 'other' (uid " + std::to_string(other.uid) + "): setgroups: "));
}

TEST_F(ChildProcessTest, AProgramThatCannotRunIsAnError) {
  ChildOptions options;
  options.program = dir() + "/no-such-program";
  options.argv = {"no-such-program"};
  options.cwd = dir();
  auto child = ChildProcess::Start(options, clock_);
  ASSERT_FALSE(child.ok());
  EXPECT_THAT(std::string(child.status().message()), HasSubstr("No such file"));

  options.program = "/bin/true";
  options.argv = {"true"};
  options.cwd = dir() + "/missing-dir";
  child = ChildProcess::Start(options, clock_);
  ASSERT_FALSE(child.ok());
  EXPECT_THAT(std::string(child.status().message()), HasSubstr("missing-dir"));
}

}  // namespace
}  // namespace stormark::agent
