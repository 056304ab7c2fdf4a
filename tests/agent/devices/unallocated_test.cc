#include "agent/devices/unallocated.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint64_t kMiB = 1 << 20;

class UnallocatedTest : public TempDirTest {
 protected:
  // A sparse file of `size` bytes with each of `written` filled with 0xab.
  int SparseFile(uint64_t size, const std::vector<ByteRange>& written) {
    const std::string path = dir() + "/sparse";
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(size)), 0);
    for (const ByteRange& range : written) {
      const std::vector<char> bytes(range.end - range.begin, '\xab');
      EXPECT_EQ(pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(range.begin)),
                static_cast<ssize_t>(bytes.size()));
    }
    EXPECT_EQ(fsync(fd), 0);
    return fd;
  }

  static void WriteFile(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
};

TEST_F(UnallocatedTest, AFileNeverWrittenIsOneHole) {
  const int fd = SparseFile(8 * kMiB, {});
  auto holes = UnallocatedRanges(fd, 0, 8 * kMiB);
  close(fd);
  ASSERT_TRUE(holes.ok()) << holes.status();
  EXPECT_THAT(*holes, ElementsAre(ByteRange{0, 8 * kMiB}));
}

TEST_F(UnallocatedTest, DataInTheMiddleLeavesHolesOnBothSides) {
  const int fd = SparseFile(8 * kMiB, {{2 * kMiB, 3 * kMiB}});
  auto holes = UnallocatedRanges(fd, 0, 8 * kMiB);
  ASSERT_TRUE(holes.ok()) << holes.status();
  EXPECT_THAT(*holes, ElementsAre(ByteRange{0, 2 * kMiB}, ByteRange{3 * kMiB, 8 * kMiB}));
  // Only the part asked about.
  holes = UnallocatedRanges(fd, 2 * kMiB + 4096, 4 * kMiB);
  close(fd);
  ASSERT_TRUE(holes.ok()) << holes.status();
  EXPECT_THAT(*holes, ElementsAre(ByteRange{3 * kMiB, 4 * kMiB}));
}

TEST_F(UnallocatedTest, AFullyWrittenFileHasNone) {
  const int fd = SparseFile(4 * kMiB, {{0, 4 * kMiB}});
  auto holes = UnallocatedRanges(fd, 0, 4 * kMiB);
  close(fd);
  ASSERT_TRUE(holes.ok()) << holes.status();
  EXPECT_THAT(*holes, IsEmpty());
}

TEST_F(UnallocatedTest, PreallocatedButUnwrittenSpaceCounts) {
  const int fd = SparseFile(0, {});
  if (posix_fallocate(fd, 0, static_cast<off_t>(4 * kMiB)) != 0) {
    close(fd);
    GTEST_SKIP() << "no fallocate on this filesystem";
  }
  auto holes = UnallocatedRanges(fd, 0, 4 * kMiB);
  close(fd);
  ASSERT_TRUE(holes.ok()) << holes.status();
  // ext4 and xfs report unwritten extents as holes; reads there never reach the disk.
  EXPECT_THAT(*holes, ElementsAre(ByteRange{0, 4 * kMiB}));
}

TEST_F(UnallocatedTest, LoopBackingComesFromSysfsByDeviceNumber) {
  // /sys/dev/block/7:3 -> the loop device's directory; only its loop/ attributes matter.
  const std::string sys = dir() + "/dev_block";
  ASSERT_EQ(mkdir(sys.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((sys + "/7:3").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((sys + "/7:3/loop").c_str(), 0700), 0);
  WriteFile(sys + "/7:3/loop/backing_file", "/srv/images/disk.img\n");
  WriteFile(sys + "/7:3/loop/offset", "1048576\n");
  std::optional<LoopBacking> backing = LoopBackingOf(makedev(7, 3), sys);
  ASSERT_TRUE(backing.has_value());
  EXPECT_EQ(backing->file, "/srv/images/disk.img");
  EXPECT_EQ(backing->offset, kMiB);

  WriteFile(sys + "/7:3/loop/offset", "12x\n");
  EXPECT_FALSE(LoopBackingOf(makedev(7, 3), sys).has_value()) << "an offset it cannot read";
  WriteFile(sys + "/7:3/loop/offset", "0\n");
  WriteFile(sys + "/7:3/loop/backing_file", "/srv/images/disk.img (deleted)\n");
  EXPECT_FALSE(LoopBackingOf(makedev(7, 3), sys).has_value());
  EXPECT_FALSE(LoopBackingOf(makedev(7, 4), sys).has_value()) << "not attached";
  EXPECT_FALSE(LoopBackingOf(makedev(253, 0), sys).has_value()) << "not a loop device";
}

}  // namespace
}  // namespace stormark::agent
