#include "agent/runner/kernel_waits.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

class KernelWaitsTest : public TempDirTest {
 protected:
  // A fake /proc/self with a task `tid` whose stat shows `state` and whose syscall file
  // holds `syscall`.
  void AddTask(int tid, const std::string& comm, char state, const std::string& syscall) {
    const std::string task = dir() + "/task/" + std::to_string(tid);
    mkdir((dir() + "/task").c_str(), 0755);
    mkdir(task.c_str(), 0755);
    std::ofstream(task + "/stat") << tid << " (" << comm << ") " << state << " 1 2 3 4\n";
    std::ofstream(task + "/syscall") << syscall << "\n";
  }
  void AddFd(int fd, const std::string& target) {
    mkdir((dir() + "/fd").c_str(), 0755);
    ASSERT_EQ(symlink(target.c_str(), (dir() + "/fd/" + std::to_string(fd)).c_str()), 0);
  }
};

TEST_F(KernelWaitsTest, FindsOnlyThreadsInStateDWithTheirCallAndFile) {
  AddTask(100, "stormark-agent", 'S', "202 0x1 0x0");
  AddTask(101, "worker", 'D', "17 0x7 0x7f0000 0x1000 0x2000 0x0 0x0 0x7ffd 0x7f12");
  AddTask(102, "other", 'R', "running");
  AddFd(7, "/dev/dm-3");
  const std::vector<KernelWait> waits = ThreadsInKernelWait(dir());
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].tid, 101);
  EXPECT_EQ(waits[0].syscall, SyscallName(17));
  EXPECT_EQ(waits[0].file, "/dev/dm-3");
#if defined(__x86_64__)
  EXPECT_EQ(waits[0].Describe(), "pread64 on /dev/dm-3");
#endif
}

TEST_F(KernelWaitsTest, ACommandNameWithParenthesesAndSpacesDoesNotConfuseTheState) {
  AddTask(200, "a) D (b", 'S', "0 0x3");
  AddTask(201, "x y) R (z", 'D', "-1 0x0");
  const std::vector<KernelWait> waits = ThreadsInKernelWait(dir());
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].tid, 201);
  EXPECT_EQ(waits[0].syscall, "");  // Not in a call the kernel names.
  EXPECT_EQ(waits[0].Describe(), "an I/O");
}

TEST_F(KernelWaitsTest, ACallWithoutAnFdArgumentNamesNoFile) {
#if defined(__x86_64__)
  AddTask(300, "w", 'D', "162 0x0");  // sync()
  AddFd(0, "/dev/null");
  const std::vector<KernelWait> waits = ThreadsInKernelWait(dir());
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].Describe(), "sync");
#endif
}

TEST_F(KernelWaitsTest, AMissingProcTreeGivesNothing) {
  EXPECT_TRUE(ThreadsInKernelWait(dir() + "/nope").empty());
}

TEST(KernelWaits, ThisProcessHasNoThreadInStateD) { EXPECT_TRUE(ThreadsInKernelWait().empty()); }

TEST(KernelWaits, UnknownCallsAreNamedByNumber) { EXPECT_EQ(SyscallName(99999), "syscall 99999"); }

}  // namespace
}  // namespace stormark::agent
