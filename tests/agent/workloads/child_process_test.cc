#include "agent/workloads/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
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
