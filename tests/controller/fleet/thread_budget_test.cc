#include "controller/fleet/thread_budget.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

class ThreadBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/thread-budget-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    paths_.proc_self_cgroup = dir_ + "/cgroup";
    paths_.cgroup_root = dir_ + "/sys";
    paths_.threads_max = dir_ + "/threads-max";
    paths_.loadavg = dir_ + "/loadavg";
    Write("threads-max", "100000\n");
    Write("loadavg", "0.50 0.40 0.30 2/345 6789\n");
  }

  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& relative, const std::string& text) {
    const std::string path = dir_ + "/" + relative;
    for (size_t at = path.find('/', dir_.size() + 1); at != std::string::npos;
         at = path.find('/', at + 1)) {
      mkdir(path.substr(0, at).c_str(), 0755);
    }
    std::ofstream(path) << text;
  }

  std::string dir_;
  ThreadLimitPaths paths_;
};

TEST_F(ThreadBudgetTest, ThePidsMaxOfAV1CgroupBinds) {
  Write("cgroup", "12:memory:/\n8:pids:/batch/stormark\n0::/\n");
  Write("sys/pids/batch/stormark/pids.max", "30\n");
  Write("sys/pids/batch/stormark/pids.current", "2\n");
  Write("sys/pids/batch/pids.max", "max\n");
  Write("sys/pids/batch/pids.current", "9\n");
  const auto limit = TightestThreadLimit(paths_);
  ASSERT_TRUE(limit.has_value());
  EXPECT_EQ(limit->room, 28);
  EXPECT_EQ(limit->what, "pids.max 30 of cgroup /batch/stormark (2 in use)");
  paths_.own_threads = 2;  // The 2 in use are the controller's own: they count to its need.
  const common::Status s = CheckThreadBudget(paths_);
  EXPECT_TRUE(absl::IsResourceExhausted(s));
  EXPECT_EQ(s.message(),
            fmt::format("the controller may start 28 more threads (pids.max 30 of cgroup "
                        "/batch/stormark (2 in use)), and it needs about {} more ({} in all, "
                        "whatever the number of hosts): raise that limit",
                        kControllerThreads - 2, kControllerThreads));
  Write("sys/pids/batch/stormark/pids.max", fmt::format("{}\n", kControllerThreads));
  EXPECT_TRUE(CheckThreadBudget(paths_).ok());  // Just room.
  Write("sys/pids/batch/stormark/pids.max", fmt::format("{}\n", kControllerThreads - 1));
  EXPECT_FALSE(CheckThreadBudget(paths_).ok());
}

TEST_F(ThreadBudgetTest, AnAncestorsLimitBindsToo) {
  Write("cgroup", "8:pids:/user.slice/job\n");
  Write("sys/pids/user.slice/job/pids.max", "max\n");
  Write("sys/pids/user.slice/job/pids.current", "5\n");
  Write("sys/pids/user.slice/pids.max", "500\n");
  Write("sys/pids/user.slice/pids.current", "450\n");
  EXPECT_EQ(TightestThreadLimit(paths_)->what, "pids.max 500 of cgroup /user.slice (450 in use)");
  EXPECT_EQ(TightestThreadLimit(paths_)->room, 50);
  EXPECT_TRUE(CheckThreadBudget(paths_).ok());
  Write("sys/pids/user.slice/pids.current", "490\n");
  EXPECT_FALSE(CheckThreadBudget(paths_).ok());
}

TEST_F(ThreadBudgetTest, TheUnifiedHierarchysPidsMax) {
  Write("cgroup", "0::/system.slice/stormark.service\n");
  Write("sys/cgroup.controllers", "cpu memory pids\n");
  Write("sys/system.slice/stormark.service/pids.max", "4915\n");
  Write("sys/system.slice/stormark.service/pids.current", "15\n");
  EXPECT_EQ(TightestThreadLimit(paths_)->room, 4900);
}

TEST_F(ThreadBudgetTest, TheKernelsThreadsMaxAndTheUsersUlimit) {
  Write("cgroup", "8:pids:/\n");
  EXPECT_EQ(TightestThreadLimit(paths_)->what,
            "kernel.threads-max 100000 (345 threads on this machine)");
  paths_.nproc_limit = 1024;
  paths_.nproc_used = 1000;
  EXPECT_EQ(TightestThreadLimit(paths_)->what, "ulimit -u 1024 (1000 threads of this user)");
  // It has 1 thread (own_threads), so it lacks kControllerThreads - 1.
  paths_.nproc_used = 1026 - static_cast<int64_t>(kControllerThreads);
  EXPECT_THAT(std::string(CheckThreadBudget(paths_).message()),
              HasSubstr(fmt::format("may start {} more threads", kControllerThreads - 2)));
  paths_.nproc_used = 1025 - static_cast<int64_t>(kControllerThreads);
  EXPECT_TRUE(CheckThreadBudget(paths_).ok());
}

TEST_F(ThreadBudgetTest, NoLimitToReadIsNoObjection) {
  paths_.threads_max = dir_ + "/none";
  EXPECT_FALSE(TightestThreadLimit(paths_).has_value());
  EXPECT_TRUE(CheckThreadBudget(paths_).ok());
}

}  // namespace
}  // namespace stormark::controller
