#include "agent/targets/block_target.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
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
const std::atomic<bool> kNotCancelled{false};

class FillUnallocatedTest : public TempDirTest {
 protected:
  // A block target on a sparse 8 MiB file whose [1 MiB, 2 MiB) holds 0xab.
  TargetConfig SparseTarget(bool disposable) {
    TargetConfig target;
    target.name = "img";
    target.kind = "block";
    target.path = dir() + "/img.bin";
    target.disposable = disposable;
    const int fd = open(target.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(8 * kMiB)), 0);
    const std::vector<char> bytes(kMiB, '\xab');
    EXPECT_EQ(pwrite(fd, bytes.data(), bytes.size(), kMiB), static_cast<ssize_t>(kMiB));
    EXPECT_EQ(fsync(fd), 0);
    close(fd);
    return target;
  }

  static std::vector<ByteRange> Holes(const std::string& path, uint64_t begin, uint64_t end) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    auto holes = UnallocatedRanges(fd, begin, end);
    close(fd);
    EXPECT_TRUE(holes.ok()) << holes.status();
    return holes.ok() ? *holes : std::vector<ByteRange>{};
  }

  static std::vector<char> Read(const std::string& path, uint64_t offset, size_t n) {
    std::vector<char> bytes(n);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_EQ(pread(fd, bytes.data(), n, static_cast<off_t>(offset)), static_cast<ssize_t>(n));
    close(fd);
    return bytes;
  }
};

TEST_F(FillUnallocatedTest, ADisposableTargetGetsTheHolesItReadsFilled) {
  const TargetConfig target = SparseTarget(/*disposable=*/true);
  std::vector<std::string> warnings;
  ASSERT_TRUE(FillUnallocated(target, 0, 4 * kMiB, "/nonexistent", kNotCancelled, &warnings).ok());
  ASSERT_THAT(warnings, ElementsAre(HasSubstr("filled 3 MiB that held no data in " +
                                              target.path)));
  // What the phase reads holds data now; the rest of the file is left alone.
  EXPECT_THAT(Holes(target.path, 0, 4 * kMiB), IsEmpty());
  EXPECT_THAT(Holes(target.path, 4 * kMiB, 8 * kMiB), ElementsAre(ByteRange{4 * kMiB, 8 * kMiB}));
  EXPECT_EQ(Read(target.path, kMiB, kMiB), std::vector<char>(kMiB, '\xab')) << "data untouched";
  EXPECT_NE(Read(target.path, 0, 4096), std::vector<char>(4096, 0)) << "random, not zeros";

  // Once filled, nothing more to do or say.
  warnings.clear();
  ASSERT_TRUE(FillUnallocated(target, 0, 4 * kMiB, "/nonexistent", kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, IsEmpty());
}

TEST_F(FillUnallocatedTest, AnyOtherTargetIsOnlyWarnedAbout) {
  const TargetConfig target = SparseTarget(/*disposable=*/false);
  std::vector<std::string> warnings;
  ASSERT_TRUE(FillUnallocated(target, 0, 8 * kMiB, "/nonexistent", kNotCancelled, &warnings).ok());
  ASSERT_THAT(warnings, ElementsAre(HasSubstr("7 MiB of the 8 MiB this phase reads hold no data")));
  EXPECT_THAT(warnings[0], HasSubstr("return zeros without touching the disk"));
  EXPECT_THAT(Holes(target.path, 0, 8 * kMiB),
              ElementsAre(ByteRange{0, kMiB}, ByteRange{2 * kMiB, 8 * kMiB}))
      << "not written";
}

TEST_F(FillUnallocatedTest, ARangeThatHoldsDataNeedsNothing) {
  const TargetConfig target = SparseTarget(/*disposable=*/false);
  std::vector<std::string> warnings;
  ASSERT_TRUE(
      FillUnallocated(target, kMiB, 2 * kMiB, "/nonexistent", kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, IsEmpty());
}

TEST_F(FillUnallocatedTest, OtherKindsOfTargetAreLeftAlone) {
  TargetConfig target;
  target.name = "sink";
  target.kind = "null";
  std::vector<std::string> warnings;
  ASSERT_TRUE(FillUnallocated(target, 0, kMiB, "/nonexistent", kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, IsEmpty());
}

}  // namespace
}  // namespace stormark::agent
