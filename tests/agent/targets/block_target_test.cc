#include "agent/targets/block_target.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "agent/devices/unallocated.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kMiB = 1 << 20;
class WarnUnallocatedTest : public TempDirTest {
 protected:
  // A block target on a sparse 8 MiB file whose [1 MiB, 2 MiB) holds 0xab.
  TargetConfig SparseTarget(const std::string& name = "img.bin") {
    TargetConfig target;
    target.name = "img";
    target.kind = "block";
    target.path = dir() + "/" + name;
    target.disposable = true;
    const int fd = open(target.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(8 * kMiB)), 0);
    const std::vector<char> bytes(kMiB, '\xab');
    EXPECT_EQ(pwrite(fd, bytes.data(), bytes.size(), kMiB), static_cast<ssize_t>(kMiB));
    EXPECT_EQ(fsync(fd), 0);
    close(fd);
    return target;
  }

  static std::vector<ByteRange> Holes(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    auto holes = UnallocatedRanges(fd, 0, 8 * kMiB);
    close(fd);
    EXPECT_TRUE(holes.ok()) << holes.status();
    return holes.ok() ? *holes : std::vector<ByteRange>{};
  }
};

TEST_F(WarnUnallocatedTest, SaysHowMuchOfTheReadRangeHoldsNoDataAndWritesNothing) {
  const TargetConfig target = SparseTarget();
  std::vector<std::string> warnings;
  WarnUnallocated(target, 0, 8 * kMiB, "/nonexistent", &warnings);
  ASSERT_THAT(warnings, ElementsAre(HasSubstr("target 'img': 7 MiB of the 8 MiB this phase reads "
                                              "hold no data in " + target.path)));
  EXPECT_THAT(warnings[0], HasSubstr("return zeros without touching the disk"));
  EXPECT_THAT(Holes(target.path), ElementsAre(ByteRange{0, kMiB}, ByteRange{2 * kMiB, 8 * kMiB}))
      << "nothing written, disposable or not";
}

TEST_F(WarnUnallocatedTest, OnlyTheRangeReadCounts) {
  const TargetConfig target = SparseTarget();
  std::vector<std::string> warnings;
  WarnUnallocated(target, kMiB, 2 * kMiB, "/nonexistent", &warnings);
  EXPECT_THAT(warnings, IsEmpty());
  WarnUnallocated(target, kMiB, 3 * kMiB, "/nonexistent", &warnings);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("1 MiB of the 2 MiB")));
}

TEST_F(WarnUnallocatedTest, ASymlinkIsFollowed) {
  const TargetConfig file = SparseTarget();
  TargetConfig link = file;
  link.path = dir() + "/loop0";  // A name that must not be taken for a loop device.
  ASSERT_EQ(symlink(file.path.c_str(), link.path.c_str()), 0);
  std::vector<std::string> warnings;
  WarnUnallocated(link, 0, 8 * kMiB, "/nonexistent", &warnings);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("7 MiB of the 8 MiB")));
}

TEST_F(WarnUnallocatedTest, OtherKindsOfTargetAreLeftAlone) {
  TargetConfig target;
  target.name = "sink";
  target.kind = "null";
  std::vector<std::string> warnings;
  WarnUnallocated(target, 0, kMiB, "/nonexistent", &warnings);
  EXPECT_THAT(warnings, IsEmpty());
}

}  // namespace
}  // namespace stormark::agent
