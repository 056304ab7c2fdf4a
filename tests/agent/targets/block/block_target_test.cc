#include "agent/targets/block/block_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "agent/devices/unallocated.h"
#include "common/strings.h"
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

std::shared_ptr<BlockTarget> Resolved(const TargetConfig& target) {
  auto resolved = BlockTarget::Resolve(target);
  EXPECT_TRUE(resolved.ok()) << resolved.status();
  return resolved.ok() ? *resolved : nullptr;
}

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
  WarnUnallocated(*Resolved(target), 0, 8 * kMiB, "/nonexistent", &warnings);
  ASSERT_THAT(warnings, ElementsAre(HasSubstr("target 'img': 7 MiB of the 8 MiB this phase reads "
                                              "hold no data in " +
                                              target.path)));
  EXPECT_THAT(warnings[0], HasSubstr("return zeros without touching the disk"));
  EXPECT_THAT(Holes(target.path), ElementsAre(ByteRange{0, kMiB}, ByteRange{2 * kMiB, 8 * kMiB}))
      << "nothing written, disposable or not";
}

TEST_F(WarnUnallocatedTest, OnlyTheRangeReadCounts) {
  const TargetConfig target = SparseTarget();
  std::vector<std::string> warnings;
  WarnUnallocated(*Resolved(target), kMiB, 2 * kMiB, "/nonexistent", &warnings);
  EXPECT_THAT(warnings, IsEmpty());
  WarnUnallocated(*Resolved(target), kMiB, 3 * kMiB, "/nonexistent", &warnings);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("1 MiB of the 2 MiB")));
}

TEST_F(WarnUnallocatedTest, ASymlinkIsFollowed) {
  const TargetConfig file = SparseTarget();
  TargetConfig link = file;
  link.path = dir() + "/loop0";  // A name that must not be taken for a loop device.
  ASSERT_EQ(symlink(file.path.c_str(), link.path.c_str()), 0);
  std::vector<std::string> warnings;
  WarnUnallocated(*Resolved(link), 0, 8 * kMiB, "/nonexistent", &warnings);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("7 MiB of the 8 MiB")));
}

TEST_F(WarnUnallocatedTest, OtherKindsOfTargetAreLeftAlone) {
  TargetConfig target;
  target.name = "sink";
  target.kind = "null";
  std::vector<std::string> warnings;
  WarnUnallocated(*Resolved(target), 0, kMiB, "/nonexistent", &warnings);
  EXPECT_THAT(warnings, IsEmpty());
}

// A block target's path that leads elsewhere after the phase resolved it: the attack is a
// path swapped between the check and the use.
class BlockTargetIdentityTest : public TempDirTest {
 protected:
  // A block target on a new file of `size` bytes of `fill`.
  TargetConfig File(const std::string& name, uint64_t size, char fill = '\0',
                    bool disposable = true) {
    TargetConfig target;
    target.name = name;
    target.kind = "block";
    target.path = dir() + "/" + name + ".img";
    target.disposable = disposable;
    Write(target.path, std::string(size, fill));
    return target;
  }

  static void Write(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }

  static std::string Contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  // Puts `other` in the place of `path`: a symlink to it, swapped in by rename (atomically,
  // as an attacker would).
  static void PointAt(const std::string& path, const std::string& other) {
    const std::string link = path + ".link";
    ASSERT_EQ(symlink(other.c_str(), link.c_str()), 0);
    ASSERT_EQ(std::rename(link.c_str(), path.c_str()), 0);
  }

  static std::string IdentityOf(const std::string& path) {
    struct stat st;
    EXPECT_EQ(stat(path.c_str(), &st), 0);
    return DeviceIdentity::Of(st).ToString();
  }
};

TEST_F(BlockTargetIdentityTest, AFileIsResolvedByItsFilesystemAndInode) {
  const TargetConfig target = File("img", 4096);
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  EXPECT_GE(block->fd(), 0);
  struct stat st;
  ASSERT_EQ(stat(target.path.c_str(), &st), 0);
  EXPECT_FALSE(block->identity().block);
  EXPECT_EQ(block->identity().dev, st.st_dev);
  EXPECT_EQ(block->identity().ino, st.st_ino);
  EXPECT_THAT(block->identity().ToString(), HasSubstr(common::StrCat(" inode ", st.st_ino)));
  auto again = block->Reopen(O_RDWR);
  ASSERT_TRUE(again.ok()) << again.status();
  close(*again);
}

TEST_F(BlockTargetIdentityTest, AReopenOfAPathThatLeadsElsewhereNamesTheTargetThePathAndBoth) {
  const TargetConfig target = File("img", 4096);
  const TargetConfig other = File("other", 4096, 'o');
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  const std::string resolved = block->identity().ToString();
  PointAt(target.path, other.path);
  auto reopened = block->Reopen(O_RDWR);
  ASSERT_FALSE(reopened.ok());
  EXPECT_EQ(reopened.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reopened.status().message(), "target 'img': " + target.path + " leads to " +
                                             IdentityOf(other.path) + " now, not to " + resolved +
                                             " as when this phase resolved it; refusing to use it");
}

TEST_F(BlockTargetIdentityTest, ItsIdentityOutlivesItsDescriptor) {
  const TargetConfig target = File("img", 4096);
  const TargetConfig other = File("other", 4096, 'o');
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  block->ReleaseDescriptor();
  EXPECT_EQ(block->fd(), -1);
  EXPECT_TRUE(block->exists());
  auto same = block->Reopen(O_RDONLY);
  ASSERT_TRUE(same.ok()) << same.status();
  close(*same);
  PointAt(target.path, other.path);
  EXPECT_EQ(block->Reopen(O_RDONLY).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(BlockTargetIdentityTest, SomethingNeitherAFileNorABlockDeviceIsRefused) {
  TargetConfig target;
  target.name = "tty";
  target.kind = "block";
  target.path = dir() + "/null";
  ASSERT_EQ(symlink("/dev/null", target.path.c_str()), 0);
  auto block = BlockTarget::Resolve(target);
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(block.status().message(), HasSubstr("target 'tty': " + target.path +
                                                  " is a character device (1:3), "
                                                  "neither a regular file nor a block device"));

  // A FIFO put in the place of a resolved file is neither waited on nor used.
  const TargetConfig file = File("img", 4096);
  auto resolved = Resolved(file);
  ASSERT_NE(resolved, nullptr);
  ASSERT_EQ(std::remove(file.path.c_str()), 0);
  ASSERT_EQ(mkfifo(file.path.c_str(), 0600), 0);
  auto reopened = resolved->Reopen(O_RDONLY);
  ASSERT_FALSE(reopened.ok());
  EXPECT_THAT(reopened.status().message(), HasSubstr("leads to a FIFO"));
}

TEST_F(BlockTargetIdentityTest, AMissingPathWithoutASizeIsAnErrorNamingIt) {
  TargetConfig target;
  target.name = "gone";
  target.kind = "block";
  target.path = dir() + "/gone.img";
  auto block = BlockTarget::Resolve(target);
  ASSERT_FALSE(block.ok());
  EXPECT_THAT(block.status().message(), HasSubstr("target 'gone': " + target.path));
  target.size = 4096;
  auto later = BlockTarget::Resolve(target);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ((*later)->fd(), -1) << "created when it is opened";
}

TEST_F(BlockTargetIdentityTest, AWriteThroughAPathSwappedAfterResolvingIsRefusedAndWritesNothing) {
  const TargetConfig target = File("img", kMiB);
  const TargetConfig other = File("other", kMiB, 'o', /*disposable=*/false);
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  PointAt(target.path, other.path);
  std::vector<std::string> warnings;
  BlockOpenOptions options;
  options.write = true;
  auto device = OpenBlockTarget(*block, options, kNotCancelled, &warnings);
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.status().message(), HasSubstr("as when this phase resolved it"));
  EXPECT_EQ(Contents(other.path), std::string(kMiB, 'o'));
}

TEST_F(BlockTargetIdentityTest, TheDeviceOpenedIsWhatThePhaseResolved) {
  const TargetConfig target = File("img", kMiB, 'i');
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  std::vector<std::string> warnings;
  BlockOpenOptions options;
  options.write = true;
  auto device = OpenBlockTarget(*block, options, kNotCancelled, &warnings);
  ASSERT_TRUE(device.ok()) << device.status();
  // Swapped once the device is open: the device still writes the file it was opened on.
  const TargetConfig other = File("other", kMiB, 'o');
  const std::string original = target.path + ".orig";
  ASSERT_EQ(link(target.path.c_str(), original.c_str()), 0);
  PointAt(target.path, other.path);
  const std::string bytes(4096, 'w');
  ASSERT_TRUE((*device)->WriteAt(0, bytes.size(), bytes.data()).ok());
  EXPECT_EQ(Contents(original).substr(0, 4096), bytes);
  EXPECT_EQ(Contents(other.path), std::string(kMiB, 'o'));
}

TEST_F(BlockTargetIdentityTest, AWriteToATargetNotDisposableIsRefusedAndAReadIsNot) {
  const TargetConfig target = File("ro", kMiB, 'r', /*disposable=*/false);
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  std::vector<std::string> warnings;
  BlockOpenOptions options;
  options.write = true;
  auto device = OpenBlockTarget(*block, options, kNotCancelled, &warnings);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Contents(target.path), std::string(kMiB, 'r'));
  options.write = false;
  EXPECT_TRUE(OpenBlockTarget(*block, options, kNotCancelled, &warnings).ok());
}

TEST_F(BlockTargetIdentityTest, AMissingFileIsCreatedAndFilledThroughItsOwnDescriptor) {
  TargetConfig target;
  target.name = "new";
  target.kind = "block";
  target.path = dir() + "/new.img";
  target.size = kMiB;
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  std::vector<std::string> warnings;
  auto device = OpenBlockTarget(*block, BlockOpenOptions(), kNotCancelled, &warnings);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("created " + target.path + " and filled it")));
  EXPECT_EQ(block->identity().ToString(), IdentityOf(target.path));
  const std::string data = Contents(target.path);
  ASSERT_EQ(data.size(), kMiB);
  EXPECT_NE(data, std::string(kMiB, '\0'));
}

TEST_F(BlockTargetIdentityTest, SomethingPutInTheWayOfAFileToBeCreatedIsNeitherFollowedNorFilled) {
  TargetConfig target;
  target.name = "new";
  target.kind = "block";
  target.path = dir() + "/new.img";
  target.size = kMiB;
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  const TargetConfig other = File("other", kMiB, 'o', /*disposable=*/false);
  ASSERT_EQ(symlink(other.path.c_str(), target.path.c_str()), 0);
  std::vector<std::string> warnings;
  auto device = OpenBlockTarget(*block, BlockOpenOptions(), kNotCancelled, &warnings);
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.status().message(), HasSubstr("target 'new': cannot create " + target.path));
  EXPECT_EQ(Contents(other.path), std::string(kMiB, 'o'));
  struct stat st;
  ASSERT_EQ(lstat(target.path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "left as it was";
}

TEST_F(BlockTargetIdentityTest, AFillThatFailsRemovesOnlyTheFileItMade) {
  TargetConfig target;
  target.name = "new";
  target.kind = "block";
  target.path = dir() + "/new.img";
  target.size = kMiB;
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  const std::atomic<bool> cancelled{true};
  std::vector<std::string> warnings;
  auto device = OpenBlockTarget(*block, BlockOpenOptions(), cancelled, &warnings);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kCancelled);
  struct stat st;
  EXPECT_NE(lstat(target.path.c_str(), &st), 0) << "a half-filled file is removed";
  EXPECT_EQ(block->fd(), -1);
}

TEST_F(BlockTargetIdentityTest, HolesAreAskedOfWhatThePhaseResolved) {
  const TargetConfig target = File("img", kMiB, 'd');  // Data all through.
  auto block = Resolved(target);
  ASSERT_NE(block, nullptr);
  // Replaced by a sparse file: the probe still answers for the file the phase uses.
  const std::string sparse = dir() + "/sparse.img";
  std::ofstream(sparse).close();
  ASSERT_EQ(truncate(sparse.c_str(), static_cast<off_t>(kMiB)), 0);
  PointAt(target.path, sparse);
  const std::optional<Unallocated> found = FindUnallocated(*block, 0, kMiB, "/nonexistent");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->bytes, 0u);
}

}  // namespace
}  // namespace stormark::agent
