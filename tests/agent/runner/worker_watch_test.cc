#include "agent/runner/worker_watch.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "agent/runner/kernel_waits.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

class WorkerWatchTest : public TempDirTest {
 protected:
  // A fake /proc/self with one task that is in state `state`, in a write(2).
  void AddTask(char state) {
    mkdir((dir() + "/task").c_str(), 0755);
    mkdir((dir() + "/task/7").c_str(), 0755);
    std::ofstream(dir() + "/task/7/stat") << "7 (worker) " << state << " 1 2 3 4\n";
    std::ofstream(dir() + "/task/7/syscall") << "1 0x9 0x0\n";
  }
};

TEST_F(WorkerWatchTest, StalledWhenNothingCompletedForLongWithAThreadInTheKernel) {
  AddTask('D');
  WorkerWatch watch(0, 10 * kSecond, 2 * kSecond, dir());
  watch.Progress(5 * kSecond, 100);
  EXPECT_EQ(watch.Stalled(14 * kSecond), "");  // 9 s since the last completion.
  watch.Progress(16 * kSecond, 100);           // Nothing new.
  EXPECT_EQ(watch.Stalled(16 * kSecond),
            "no I/O completed for 11 s while a worker sits in " + SyscallName(1));
}

TEST_F(WorkerWatchTest, NotStalledWithoutAThreadInTheKernel) {
  AddTask('S');
  WorkerWatch watch(0, 10 * kSecond, 2 * kSecond, dir());
  EXPECT_EQ(watch.Stalled(60 * kSecond), "");
}

TEST_F(WorkerWatchTest, StuckOnlyOnceTheStopIsOldAndAThreadIsInTheKernel) {
  AddTask('D');
  WorkerWatch watch(0, 100 * kSecond, 2 * kSecond, dir());
  watch.Progress(3 * kSecond, 1);
  EXPECT_EQ(watch.Stuck(4 * kSecond), "");  // Told to stop now.
  EXPECT_EQ(watch.Stuck(5 * kSecond), "");  // 1 s later: it may still come back.
  // Stuck since the last completion, which came before the stop.
  EXPECT_EQ(watch.Stuck(6 * kSecond), SyscallName(1) + " for 3 s");
}

TEST_F(WorkerWatchTest, NotStuckWhenNoThreadIsInTheKernel) {
  AddTask('R');
  WorkerWatch watch(0, 100 * kSecond, 2 * kSecond, dir());
  EXPECT_EQ(watch.Stuck(1 * kSecond), "");
  EXPECT_EQ(watch.Stuck(30 * kSecond), "");
}

}  // namespace
}  // namespace stormark::agent
