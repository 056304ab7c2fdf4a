#include "agent/host/memory_cgroup.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1 << 20;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// A fake /proc/self and cgroup mount under dir(): the parsing and the refusals, which need
// no kernel.
class MemoryCgroupFakeTest : public TempDirTest {
 protected:
  SystemPaths Fake(const std::string& cgroup, const std::string& mountinfo) {
    const std::string proc = dir() + "/proc-self";
    mkdir(proc.c_str(), 0755);
    std::ofstream(proc + "/cgroup") << cgroup;
    std::ofstream(proc + "/mountinfo") << mountinfo;
    SystemPaths paths;
    paths.proc_self = proc;
    return paths;
  }
  PhaseMemoryCgroup::Options Unchecked() {
    PhaseMemoryCgroup::Options options;
    options.require_cgroupfs = false;
    return options;
  }
};

TEST_F(MemoryCgroupFakeTest, ALimitUnderTheAgentsOwnNeedIsRefused) {
  const auto made = PhaseMemoryCgroup::Enter(SystemPaths(), "p1", 8 * kMiB);
  ASSERT_FALSE(made.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(made.status()));
  EXPECT_THAT(made.status().message(), HasSubstr("memory_limit 8 MiB is under 32 MiB"));
}

TEST_F(MemoryCgroupFakeTest, NoMemoryHierarchyMountedSaysSo) {
  const SystemPaths v1 = Fake("4:memory:/agent\n1:cpu:/\n",
                              "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
  auto made = PhaseMemoryCgroup::Enter(v1, "p1", 64 * kMiB, Unchecked());
  ASSERT_FALSE(made.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(made.status()));
  EXPECT_THAT(made.status().message(), HasSubstr("the v1 memory controller is not mounted"));

  const SystemPaths v2 = Fake("0::/x.service\n", "");
  made = PhaseMemoryCgroup::Enter(v2, "p1", 64 * kMiB, Unchecked());
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.status().message(), HasSubstr("no cgroup2 filesystem is mounted"));
}

TEST_F(MemoryCgroupFakeTest, ACgroupOutsideTheMountedPartIsRefused) {
  const SystemPaths paths =
      Fake("4:memory:/elsewhere/agent\n",
           "35 31 0:32 /container /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
  const auto made = PhaseMemoryCgroup::Enter(paths, "p1", 64 * kMiB, Unchecked());
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.status().message(), HasSubstr("is outside what /sys/fs/cgroup/memory mounts"));
}

TEST_F(MemoryCgroupFakeTest, AV2CgroupWithoutTheMemoryControllerNamesTheDelegation) {
  const std::string mount = dir() + "/unified";
  mkdir(mount.c_str(), 0755);
  mkdir((mount + "/agent.service").c_str(), 0755);
  std::ofstream(mount + "/agent.service/cgroup.controllers") << "cpu io pids\n";
  const SystemPaths paths =
      Fake("0::/agent.service\n", "41 31 0:38 / " + mount + " rw - cgroup2 cgroup2 rw\n");
  const auto made = PhaseMemoryCgroup::Enter(paths, "p1", 64 * kMiB, Unchecked());
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.status().message(), HasSubstr("lacks the memory controller"));
  EXPECT_THAT(made.status().message(), HasSubstr("Delegate=memory"));
}

TEST_F(MemoryCgroupFakeTest, ADirectoryThatIsNotCgroupfsIsRefused) {
  const std::string mount = dir() + "/memory";  // A plain directory posing as the mount.
  mkdir(mount.c_str(), 0755);
  const SystemPaths paths =
      Fake("4:memory:/\n", "35 31 0:32 / " + mount + " rw - cgroup cgroup rw,memory\n");
  const auto made = PhaseMemoryCgroup::Enter(paths, "p1", 64 * kMiB);
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.status().message(), HasSubstr("is not on a cgroup filesystem"));
  EXPECT_TRUE(ListDir(mount).empty());  // Nothing made there.
}

TEST_F(MemoryCgroupFakeTest, AFailedLimitRemovesTheChildItMade) {
  const std::string mount = dir() + "/memory";
  mkdir(mount.c_str(), 0755);
  // An escaped blank in the mount point, as mountinfo writes it.
  const std::string spaced = mount + "/a b";
  mkdir(spaced.c_str(), 0755);
  const SystemPaths paths =
      Fake("4:memory:/\n", "35 31 0:32 / " + mount + "/a\\040b rw - cgroup cgroup rw,memory\n");
  // A plain directory gets no memory.limit_in_bytes from a kernel: the write fails.
  const auto made = PhaseMemoryCgroup::Enter(paths, "p1", 64 * kMiB, Unchecked());
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.status().message(),
              HasSubstr("cannot set " + spaced + "/stormark-phase-" + std::to_string(getpid()) +
                        "-p1/memory.limit_in_bytes"));
  EXPECT_TRUE(ListDir(spaced).empty());
}

// The real thing, on this host's own memory cgroup (v1 on the development machines): a child
// process moved into a phase's cgroup cannot hold more page cache than the limit.
class MemoryCgroupRealTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make cgroups";
  }

  // A child that waits for a byte on a pipe, then allocates and touches `own` bytes a MiB at
  // a time (2 ms apart), then writes `bytes` to `file` without syncing, then waits for another
  // byte and exits.
  pid_t StartWriter(const std::string& file, uint64_t bytes, uint64_t own = 0) {
    if (pipe(go_) != 0 || pipe(done_) != 0) return -1;
    const pid_t pid = fork();
    if (pid == 0) {
      char c;
      if (read(go_[0], &c, 1) != 1) _exit(1);
      for (uint64_t held = 0; held < own; held += kMiB) {
        char* piece = static_cast<char*>(malloc(kMiB));
        if (piece == nullptr) _exit(5);
        memset(piece, 1, kMiB);
        usleep(2000);
      }
      const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      static char block[1 << 20];
      for (uint64_t done = 0; fd >= 0 && done < bytes; done += sizeof(block)) {
        for (size_t i = 0; i < sizeof(block); i += 4096) block[i] = static_cast<char>(done >> 20);
        if (write(fd, block, sizeof(block)) != static_cast<ssize_t>(sizeof(block))) _exit(2);
      }
      if (write(done_[1], "d", 1) != 1) _exit(3);
      if (read(go_[0], &c, 1) != 1) _exit(4);
      _exit(0);
    }
    return pid;
  }
  void Signal() { ASSERT_EQ(write(go_[1], "g", 1), 1); }
  // True when this host has no memory cgroup to use (Enter's FAILED_PRECONDITION); the writer
  // `pid` is then let go and reaped, for the test to skip.
  bool Unavailable(const common::StatusOr<std::unique_ptr<PhaseMemoryCgroup>>& made, pid_t pid) {
    if (made.ok() || !absl::IsFailedPrecondition(made.status())) return false;
    Signal();
    Signal();
    waitpid(pid, nullptr, 0);
    return true;
  }
  void AwaitWritten() {
    char c;
    ASSERT_EQ(read(done_[0], &c, 1), 1);
  }
  void TearDown() override {
    for (int fd : {go_[0], go_[1], done_[0], done_[1]}) {
      if (fd >= 0) close(fd);
    }
    TempDirTest::TearDown();
  }

  int go_[2] = {-1, -1};
  int done_[2] = {-1, -1};
};

// Pages of `file` in the page cache, by mincore.
uint64_t CachedBytes(const std::string& file) {
  const int fd = open(file.c_str(), O_RDONLY);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) return 0;
  void* map = mmap(nullptr, st.st_size, PROT_NONE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return 0;
  const size_t pages = (st.st_size + 4095) / 4096;
  std::vector<unsigned char> in(pages);
  uint64_t cached = 0;
  if (mincore(map, st.st_size, in.data()) == 0) {
    for (unsigned char p : in) cached += (p & 1) ? 4096 : 0;
  }
  munmap(map, st.st_size);
  return cached;
}

TEST_F(MemoryCgroupRealTest, AProcessInThePhasesCgroupHoldsNoMoreCacheThanTheLimit) {
  const std::string file = dir() + "/data";
  const pid_t pid = StartWriter(file, 256 * kMiB);
  ASSERT_GT(pid, 0);
  PhaseMemoryCgroup::Options options;
  options.pid = pid;
  auto made = PhaseMemoryCgroup::Enter(SystemPaths(), "memtest", 64 * kMiB, options);
  if (Unavailable(made, pid)) GTEST_SKIP() << "no memory cgroup here: " << made.status().message();
  ASSERT_TRUE(made.ok()) << made.status().message();
  PhaseMemoryCgroup& cgroup = **made;
  EXPECT_EQ(cgroup.limit_bytes(), 64 * kMiB);
  EXPECT_THAT(cgroup.path(),
              ::testing::EndsWith("/stormark-phase-" + std::to_string(getpid()) + "-memtest"));
  // The child moved; this process did not.
  EXPECT_THAT(ReadAll("/proc/" + std::to_string(pid) + "/cgroup"), HasSubstr("-memtest"));
  EXPECT_THAT(ReadAll("/proc/self/cgroup"), ::testing::Not(HasSubstr("stormark-phase")));

  Signal();
  AwaitWritten();
  // 256 MiB written, at most the limit of it left in the cache.
  EXPECT_LE(cgroup.PeakBytes(), 64 * kMiB);
  EXPECT_LE(CachedBytes(file), 64 * kMiB);
  EXPECT_GT(cgroup.LimitHits(), 0u);
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 256 * kMiB);

  const std::string path = cgroup.path();
  ASSERT_TRUE(cgroup.Leave().ok());
  EXPECT_FALSE(Exists(path));
  EXPECT_THAT(ReadAll("/proc/" + std::to_string(pid) + "/cgroup"),
              ::testing::Not(HasSubstr("stormark-phase")));
  EXPECT_TRUE(cgroup.Leave().ok());  // Idempotent.
  Signal();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// With exclude_own_memory, the limit holds the cache and the process's own memory comes on top:
// a process that allocates 96 MiB under a 64 MiB limit is not killed, and its file's cache is
// still held to about 64 MiB.
TEST_F(MemoryCgroupRealTest, TheProcessesOwnMemoryIsAddedToTheLimitAndTheCacheStillHeld) {
  const std::string file = dir() + "/data";
  const pid_t pid = StartWriter(file, 256 * kMiB, 96 * kMiB);
  ASSERT_GT(pid, 0);
  PhaseMemoryCgroup::Options options;
  options.pid = pid;
  options.exclude_own_memory = true;
  options.follow_interval = absl::Milliseconds(10);
  auto made = PhaseMemoryCgroup::Enter(SystemPaths(), "owntest", 64 * kMiB, options);
  if (Unavailable(made, pid)) GTEST_SKIP() << "no memory cgroup here: " << made.status().message();
  ASSERT_TRUE(made.ok()) << made.status().message();
  PhaseMemoryCgroup& cgroup = **made;
  EXPECT_EQ(cgroup.limit_bytes(), 64 * kMiB);
  Signal();
  AwaitWritten();
  // The 96 MiB are the process's own: counted, and added to the kernel's limit.
  EXPECT_GE(cgroup.OwnBytes(), 96 * kMiB);
  EXPECT_GE(cgroup.EffectiveLimitBytes(), 160 * kMiB);
  EXPECT_LE(cgroup.EffectiveLimitBytes(), 176 * kMiB);
  // The file's cache is held to the limit (the follower rounds the own memory up to a MiB and
  // trails it by a round).
  EXPECT_LE(CachedBytes(file), 72 * kMiB);
  EXPECT_GT(cgroup.LimitHits(), 0u);
  ASSERT_TRUE(cgroup.Leave().ok());
  Signal();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST_F(MemoryCgroupRealTest, AChildAnEarlierAgentLeftIsRemovedAndAUsedOneRefused) {
  const std::string file = dir() + "/data";
  const pid_t pid = StartWriter(file, 0);
  ASSERT_GT(pid, 0);
  PhaseMemoryCgroup::Options options;
  options.pid = pid;
  auto first = PhaseMemoryCgroup::Enter(SystemPaths(), "stale", 64 * kMiB, options);
  if (!first.ok() && absl::IsFailedPrecondition(first.status())) {
    Signal();
    Signal();
    waitpid(pid, nullptr, 0);
    GTEST_SKIP() << "no memory cgroup here: " << first.status().message();
  }
  ASSERT_TRUE(first.ok()) << first.status().message();
  const std::string held = (*first)->path();
  const std::string parent = held.substr(0, held.rfind('/'));
  // The same phase's name while the child is in it: refused, the child left alone.
  auto again = PhaseMemoryCgroup::Enter(SystemPaths(), "stale", 64 * kMiB, options);
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("in use by processes of an earlier phase"));
  EXPECT_TRUE(Exists(held));

  // An agent killed mid-phase leaves an empty child behind: the next Enter removes it. One of
  // a live agent (this process), between its mkdir and its move, is left alone.
  const std::string leftover = parent + "/stormark-phase-999999999-left-by-a-killed-agent";
  ASSERT_EQ(mkdir(leftover.c_str(), 0755), 0);
  const std::string live = parent + "/stormark-phase-" + std::to_string(getpid()) + "-starting";
  ASSERT_EQ(mkdir(live.c_str(), 0755), 0);
  ASSERT_TRUE((*first)->Leave().ok());
  auto next = PhaseMemoryCgroup::Enter(SystemPaths(), "next", 64 * kMiB, options);
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_FALSE(Exists(leftover));
  EXPECT_TRUE(Exists(live));
  rmdir(live.c_str());
  next->reset();  // Leaves.
  Signal();
  Signal();
  waitpid(pid, nullptr, 0);
}

// A child standing for the agent that creates empty files in `where` once told to (a byte on
// `go`), keeping them open, until a create fails or `most` are made; writes how it ended to
// `done` ('e' for ENOMEM, 'a' for every file made, 'x' for another error) and exits at the next
// byte (4 when it cannot write the answer). An open file's inode and directory entry cannot be
// reclaimed at all, so the kernel memory they are charged as fills the limit whatever the flusher
// does (a file closed at once is freed once it is written back, and whether the kernel finds room
// for the next then depends on timing).
pid_t StartCreator(const std::string& where, int most, int go, int done) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  char c;
  if (read(go, &c, 1) != 1) _exit(3);
  // As many open as the hard limit allows (20,000 here: about 37 MiB of inodes, entries and
  // open files), then created and closed.
  rlimit open_files{};
  getrlimit(RLIMIT_NOFILE, &open_files);
  open_files.rlim_cur = open_files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &open_files);
  char how = 'a';
  bool keep_open = true;
  int first = -1;  // The first file's descriptor: given back when the limit of them is reached.
  for (int i = 0; i < most && how == 'a'; ++i) {
    char name[64];
    snprintf(name, sizeof(name), "f%07d", i);
    const std::string path = where + "/" + name;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EMFILE && keep_open) {
      keep_open = false;
      close(first);  // One descriptor back, for the files after.
      fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    if (fd < 0) how = errno == ENOMEM ? 'e' : 'x';
    if (fd >= 0 && first < 0) first = fd;
    if (fd >= 0 && !keep_open) close(fd);
  }
  // The files' descriptors back (opened after the pipes', all of them above `first`): the pipe
  // needs a page of the full limit for the answer.
  if (first >= 0) close_range(first, ~0U, 0);
  if (write(done, &how, 1) != 1) _exit(4);
  if (read(go, &c, 1) != 1) _exit(3);
  _exit(0);
}

bool OnExt4(const std::string& path) {
  struct statfs fs {};
  return statfs(path.c_str(), &fs) == 0 && fs.f_type == EXT4_SUPER_MAGIC;
}

// The kernel memory of files filled the limit: the kernel's OOM killer killed the process in
// the cgroup (it was the agent, 2026-12-06; this test's creator too, before). With the killer
// off, the create that finds no room fails with ENOMEM instead, the process lives, and the
// phase can say why.
TEST_F(MemoryCgroupRealTest, FilesThatFillTheLimitFailACreateAndKillNothing) {
  if (!OnExt4(dir())) GTEST_SKIP() << "the figures are ext4's; " << dir() << " is not ext4";
  ASSERT_EQ(pipe(go_), 0);
  ASSERT_EQ(pipe(done_), 0);
  const pid_t pid = StartCreator(dir(), 100000, go_[0], done_[1]);
  ASSERT_GT(pid, 0);
  close(done_[1]);  // The creator's alone: a creator that dies ends the read below.
  done_[1] = -1;
  PhaseMemoryCgroup::Options options;
  options.pid = pid;
  options.exclude_own_memory = true;
  options.follow_interval = absl::Milliseconds(10);
  auto made = PhaseMemoryCgroup::Enter(SystemPaths(), "kmemtest", 32 * kMiB, options);
  if (!made.ok() || (*made)->version() != 1) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    if (!made.ok() && absl::IsFailedPrecondition(made.status())) {
      GTEST_SKIP() << "no memory cgroup here: " << made.status().message();
    }
    ASSERT_TRUE(made.ok()) << made.status().message();
    GTEST_SKIP() << "v2 has no switch for its OOM killer";
  }
  PhaseMemoryCgroup& cgroup = **made;
  EXPECT_TRUE(cgroup.oom_kill_disabled());
  EXPECT_EQ(cgroup.DescribeExhaustion(), "");  // Not full yet.
  Signal();
  char how = 0;
  ASSERT_EQ(read(done_[0], &how, 1), 1) << "the creator died";
  // Long before 100,000 files (32 MiB holds under 20,000 open ones), mostly their inodes and
  // entries.
  EXPECT_EQ(how, 'e') << "a: every file made; x: another error";
  EXPECT_GT(cgroup.LimitHits(), 0u);
  EXPECT_GT(cgroup.KernelPeakBytes(), 16 * kMiB) << ReadAll(cgroup.path() + "/memory.stat");
  EXPECT_THAT(cgroup.DescribeExhaustion(),
              AllOf(HasSubstr("memory limit of 32 MiB was full"), HasSubstr("of it kernel memory"),
                    HasSubstr("fewer files or a larger memory_limit")));
  ASSERT_TRUE(cgroup.Leave().ok());
  Signal();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// A thread of the agent that faults for memory when the limit is full waits (the OOM killer
// is off): the follower raises the limit a step at a time, so the agent goes on, and says so.
TEST_F(MemoryCgroupRealTest, AnAgentThatWaitsForMemoryIsLetGoAndTheResultSaysSo) {
  const std::string file = dir() + "/data";
  // 64 MiB of its own under a 32 MiB limit whose follower does not add it (a command phase's
  // way), the agent standing alone in the cgroup.
  const pid_t pid = StartWriter(file, 0, 64 * kMiB);
  ASSERT_GT(pid, 0);
  PhaseMemoryCgroup::Options options;
  options.pid = pid;
  options.follow_interval = absl::Milliseconds(10);
  auto made = PhaseMemoryCgroup::Enter(SystemPaths(), "relieftest", 32 * kMiB, options);
  if (Unavailable(made, pid)) GTEST_SKIP() << "no memory cgroup here: " << made.status().message();
  ASSERT_TRUE(made.ok()) << made.status().message();
  PhaseMemoryCgroup& cgroup = **made;
  if (!cgroup.oom_kill_disabled()) {
    Signal();
    Signal();
    waitpid(pid, nullptr, 0);
    GTEST_SKIP() << "the kernel's OOM killer is on in this cgroup (v2)";
  }
  Signal();
  AwaitWritten();  // It got its 64 MiB.
  EXPECT_GE(cgroup.EffectiveLimitBytes(), 64 * kMiB);
  EXPECT_THAT(cgroup.DescribeRelief(),
              AllOf(HasSubstr("memory limit of 32 MiB was full"),
                    HasSubstr("the limit was raised by"), HasSubstr("so that the agent went on")));
  ASSERT_TRUE(cgroup.Leave().ok());
  Signal();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// A program in the cgroup besides the agent (a command phase's) that needs more than the limit
// is stopped, as the OOM killer of a machine that small would, and the agent is not.
TEST_F(MemoryCgroupRealTest, AProgramBesideTheAgentThatOutgrowsTheLimitIsStoppedNotTheAgent) {
  const std::string file = dir() + "/data";
  const pid_t agent = StartWriter(file, 0);  // Stands for the agent: waits, allocates nothing.
  ASSERT_GT(agent, 0);
  PhaseMemoryCgroup::Options options;
  options.pid = agent;
  options.follow_interval = absl::Milliseconds(10);
  auto made = PhaseMemoryCgroup::Enter(SystemPaths(), "programtest", 32 * kMiB, options);
  if (Unavailable(made, agent)) {
    GTEST_SKIP() << "no memory cgroup here: " << made.status().message();
  }
  ASSERT_TRUE(made.ok()) << made.status().message();
  PhaseMemoryCgroup& cgroup = **made;
  if (!cgroup.oom_kill_disabled()) {
    Signal();
    Signal();
    waitpid(agent, nullptr, 0);
    GTEST_SKIP() << "the kernel's OOM killer is on in this cgroup (v2)";
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t program = fork();
  if (program == 0) {
    char c;
    if (read(ready[0], &c, 1) != 1) _exit(3);
    for (int i = 0; i < 256; ++i) {  // 256 MiB, a MiB at a time.
      char* piece = static_cast<char*>(malloc(kMiB));
      if (piece == nullptr) _exit(5);
      memset(piece, 1, kMiB);
    }
    _exit(0);
  }
  ASSERT_GT(program, 0);
  std::ofstream(cgroup.path() + "/cgroup.procs") << program;
  ASSERT_EQ(write(ready[1], "g", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(program, &status, 0), program);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  close(ready[0]);
  close(ready[1]);
  EXPECT_THAT(cgroup.DescribeRelief(), AllOf(HasSubstr("stopped the largest program in it"),
                                             HasSubstr(std::to_string(program) + " (")));
  EXPECT_EQ(cgroup.EffectiveLimitBytes(), 32 * kMiB);  // Not raised for a program.
  // The agent lives.
  EXPECT_EQ(waitpid(agent, &status, WNOHANG), 0);
  ASSERT_TRUE(cgroup.Leave().ok());
  Signal();
  Signal();
  ASSERT_EQ(waitpid(agent, &status, 0), agent);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace stormark::agent
