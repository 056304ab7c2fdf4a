#include "agent/host/sysinfo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/strings.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ReadTargetFactsTest = TempDirTest;

TEST_F(ReadTargetFactsTest, DirTargetNamesTheDiskAndItsQueueSettings) {
  const stormark::v1::TargetInfo info = ReadTargetFacts(ConfigWithTarget().targets[0]);
  EXPECT_EQ(info.kind(), "dir");
  EXPECT_FALSE(info.filesystem().empty());
  struct stat st;
  ASSERT_EQ(stat(dir().c_str(), &st), 0);
  const std::string sys =
      common::StrCat("/sys/dev/block/", major(st.st_dev), ":", minor(st.st_dev));
  if (stat(sys.c_str(), &st) != 0) GTEST_SKIP() << "no block device under " << dir();
  const auto& queue = info.device_queue();
  ASSERT_TRUE(queue.contains("name"));
  EXPECT_FALSE(queue.at("name").empty());
  ASSERT_TRUE(queue.contains("rotational"));
  EXPECT_TRUE(queue.at("rotational") == "0" || queue.at("rotational") == "1");
  ASSERT_TRUE(queue.contains("scheduler"));
  EXPECT_EQ(queue.at("scheduler").find('['), std::string::npos);  // Only the one in use.
  EXPECT_TRUE(queue.contains("logical_block_size"));
}

TEST_F(ReadTargetFactsTest, BlockFileAndNullTargetsReportTheirSize) {
  std::ofstream(dir() + "/disk.img") << std::string(65536, 'x');
  TargetConfig file{
      .name = "img", .kind = "block", .path = dir() + "/disk.img", .size = 0, .disposable = true};
  stormark::v1::TargetInfo info = ReadTargetFacts(file);
  EXPECT_EQ(info.block_kind(), "file");
  EXPECT_EQ(info.size_bytes(), 65536u);
  EXPECT_TRUE(info.disposable());

  TargetConfig missing{.name = "new",
                       .kind = "block",
                       .path = dir() + "/new.img",
                       .size = uint64_t{1} << 30,
                       .disposable = false};
  info = ReadTargetFacts(missing);
  EXPECT_EQ(info.size_bytes(), uint64_t{1} << 30);
  EXPECT_FALSE(info.disposable());

  TargetConfig null{.name = "sink", .kind = "null", .path = "", .size = 4096, .disposable = false};
  info = ReadTargetFacts(null);
  EXPECT_EQ(info.kind(), "null");
  EXPECT_EQ(info.size_bytes(), 4096u);
  EXPECT_TRUE(info.device_queue().empty());
}

TEST_F(ReadTargetFactsTest, AResolvedBlockFileIsDescribedByItsDescriptorNotItsPathNow) {
  const std::string path = dir() + "/disk.img";
  std::ofstream(path) << std::string(65536, 'x');
  TargetConfig file{.name = "img", .kind = "block", .path = path, .size = 0, .disposable = true};
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::ofstream(path + ".new") << std::string(4096, 'y');
  ASSERT_EQ(std::rename((path + ".new").c_str(), path.c_str()), 0);
  EXPECT_EQ(ReadTargetFacts(file, SystemPaths(), fd).size_bytes(), 65536u);
  EXPECT_EQ(ReadTargetFacts(file).size_bytes(), 4096u);
  close(fd);
}

TEST_F(ReadTargetFactsTest, AoeTargetThatCannotBeReachedSaysWhy) {
  TargetConfig shelf{.name = "shelf",
                     .kind = "aoe",
                     .path = "aoe://nosuchif0/1.0",
                     .size = uint64_t{1} << 20,
                     .disposable = true};
  const stormark::v1::TargetInfo info = ReadTargetFacts(shelf);
  EXPECT_EQ(info.kind(), "aoe");
  EXPECT_EQ(info.transport(), "AoE");
  EXPECT_EQ(info.size_bytes(), uint64_t{1} << 20);
  EXPECT_EQ(info.logical_block_size(), 512u);
  EXPECT_TRUE(info.disposable());
  EXPECT_TRUE(info.transport_detail().starts_with(
      "user-space AoE initiator on nosuchif0, shelf 1 slot 0: "))
      << info.transport_detail();
}

TEST_F(ReadTargetFactsTest, Ext4WithoutAJournalIsTheOneWithoutAJbd2Entry) {
  SystemPaths paths;
  paths.proc_fs_jbd2 = dir() + "/jbd2";
  ASSERT_EQ(mkdir(paths.proc_fs_jbd2.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((paths.proc_fs_jbd2 + "/vda1-8").c_str(), 0755), 0);
  EXPECT_FALSE(Ext4WithoutJournal("/dev/vda1", paths));
  EXPECT_TRUE(Ext4WithoutJournal("/dev/vda", paths));  // vda1's journal is not vda's.
  EXPECT_TRUE(Ext4WithoutJournal("/dev/vdb1", paths));
  // The kernel names an AoE disk etherd!e1.1 (its node is /dev/etherd/e1.1), and so does jbd2.
  ASSERT_EQ(mkdir((paths.proc_fs_jbd2 + "/etherd!e1.1-8").c_str(), 0755), 0);
  EXPECT_FALSE(Ext4WithoutJournal("/dev/etherd/e1.1", paths));
  EXPECT_TRUE(Ext4WithoutJournal("/dev/etherd/e1.2", paths));
  EXPECT_FALSE(Ext4WithoutJournal("", paths));  // No device: nothing to say.
  EXPECT_FALSE(Ext4WithoutJournal("server:/export", paths));
  paths.proc_fs_jbd2 = dir() + "/none";  // jbd2 not loaded: no journals.
  EXPECT_TRUE(Ext4WithoutJournal("/dev/vda1", paths));
}

class CgroupMemoryLimitTest : public TempDirTest {
 protected:
  void Write(const std::string& relative, const std::string& text) {
    const std::string path = dir() + "/" + relative;
    for (size_t slash = path.find('/', dir().size() + 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      mkdir(path.substr(0, slash).c_str(), 0700);
    }
    std::ofstream(path) << text;
  }
  uint64_t Read() const {
    return ReadCgroupMemoryLimit(dir() + "/proc-self-cgroup", dir() + "/cgroup");
  }
};

TEST_F(CgroupMemoryLimitTest, V2TakesTheSmallestMemoryMaxOnThePath) {
  Write("proc-self-cgroup", "0::/system.slice/stormark-agent.service\n");
  Write("cgroup/system.slice/stormark-agent.service/memory.max", "max\n");
  EXPECT_EQ(Read(), 0u);
  Write("cgroup/system.slice/memory.max", "1073741824\n");
  EXPECT_EQ(Read(), uint64_t{1} << 30);
  Write("cgroup/system.slice/stormark-agent.service/memory.max", "536870912\n");
  EXPECT_EQ(Read(), uint64_t{512} << 20);
}

TEST_F(CgroupMemoryLimitTest, V1ReadsTheMemoryHierarchyAndIgnoresItsNoLimitValue) {
  Write("proc-self-cgroup", "5:cpu,cpuacct:/a\n4:memory:/bench/agent\n0::/\n");
  Write("cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  Write("cgroup/memory/bench/agent/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(Read(), 0u);
  Write("cgroup/memory/bench/memory.limit_in_bytes", "268435456\n");
  EXPECT_EQ(Read(), uint64_t{256} << 20);
}

TEST_F(CgroupMemoryLimitTest, NothingReadableIsNoLimit) {
  EXPECT_EQ(Read(), 0u);
  Write("proc-self-cgroup", "garbage\n");
  EXPECT_EQ(Read(), 0u);
  Write("proc-self-cgroup", "0::/x\n");
  Write("cgroup/x/memory.max", "lots\n");
  EXPECT_EQ(Read(), 0u);
}

}  // namespace
}  // namespace stormark::agent
