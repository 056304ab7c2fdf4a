#include "agent/targets/written_prefix.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "agent/targets/block/block_target.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1 << 20;

WrittenPrefix Written(uint64_t bytes, uint64_t device_size, const std::string& phase) {
  WrittenPrefix written;
  written.bytes = bytes;
  written.device_size = device_size;
  written.phase_id = phase;
  return written;
}

class WrittenPrefixesTest : public TempDirTest {
 protected:
  // What a phase would resolve `target` to now.
  std::string Identity(const TargetConfig& target, const SystemPaths& paths = SystemPaths()) {
    auto block = BlockTarget::Resolve(target);
    return block.ok() ? TargetIdentity(**block, paths) : "unresolved";
  }
  WrittenPrefix Find(const TargetConfig& target) {
    return prefixes_.Find(target, Identity(target));
  }
  void Record(const TargetConfig& target, const WrittenPrefix& written) {
    prefixes_.Record(target, Identity(target), written);
  }

  // A disposable block target on a new file.
  TargetConfig Image(const std::string& name) {
    TargetConfig target;
    target.name = name;
    target.kind = "block";
    target.path = dir() + "/" + name + ".img";
    target.disposable = true;
    std::ofstream(target.path, std::ios::binary) << std::string(4096, '\0');
    return target;
  }

  WrittenPrefixes prefixes_;
};

TEST_F(WrittenPrefixesTest, NothingIsKnownOfATargetNoPhaseWrote) {
  EXPECT_EQ(Find(Image("img")).bytes, 0u);
}

TEST_F(WrittenPrefixesTest, ARecordedPrefixIsFoundWithItsPhase) {
  const TargetConfig target = Image("img");
  Record(target, Written(2 * kMiB, 8 * kMiB, "seq-write"));
  const WrittenPrefix found = Find(target);
  EXPECT_EQ(found.bytes, 2 * kMiB);
  EXPECT_EQ(found.device_size, 8 * kMiB);
  EXPECT_EQ(found.phase_id, "seq-write");
  EXPECT_EQ(Find(Image("other")).bytes, 0u);
}

TEST_F(WrittenPrefixesTest, AShorterWriteLeavesTheLongerPrefixAndALongerOneExtendsIt) {
  const TargetConfig target = Image("img");
  Record(target, Written(4 * kMiB, 8 * kMiB, "big"));
  Record(target, Written(kMiB, 8 * kMiB, "small"));
  EXPECT_EQ(Find(target).bytes, 4 * kMiB);
  EXPECT_EQ(Find(target).phase_id, "big");
  Record(target, Written(6 * kMiB, 8 * kMiB, "bigger"));
  EXPECT_EQ(Find(target).bytes, 6 * kMiB);
  EXPECT_EQ(Find(target).phase_id, "bigger");
  Record(target, Written(0, 8 * kMiB, "none"));  // Wrote nothing: no change.
  EXPECT_EQ(Find(target).phase_id, "bigger");
}

TEST_F(WrittenPrefixesTest, AWriteToADeviceOfAnotherSizeStartsAnew) {
  const TargetConfig target = Image("img");
  Record(target, Written(4 * kMiB, 8 * kMiB, "old"));
  Record(target, Written(kMiB, 16 * kMiB, "new"));
  EXPECT_EQ(Find(target).bytes, kMiB);
  EXPECT_EQ(Find(target).device_size, 16 * kMiB);
}

TEST_F(WrittenPrefixesTest, TargetsTheAgentMayNotWriteOrThatHoldNoDataAreNotKept) {
  TargetConfig kept = Image("img");
  kept.disposable = false;
  TargetConfig null;
  null.name = "sink";
  null.kind = "null";
  null.disposable = true;
  TargetConfig dir_target;
  dir_target.name = "scratch";
  dir_target.kind = "dir";
  dir_target.path = dir();
  dir_target.disposable = true;
  for (const TargetConfig& target : {kept, null, dir_target}) {
    Record(target, Written(kMiB, 8 * kMiB, "w"));
    EXPECT_EQ(Find(target).bytes, 0u) << target.name;
  }
}

TEST_F(WrittenPrefixesTest, ANetworkTargetIsKeptByName) {
  TargetConfig target;
  target.name = "lun";
  target.kind = "iscsi";
  target.path = "iscsi://127.0.0.1:3260/iqn.2024-01.org.example:x/1";
  target.disposable = true;
  Record(target, Written(kMiB, 8 * kMiB, "w"));
  EXPECT_EQ(Find(target).bytes, kMiB);
}

TEST_F(WrittenPrefixesTest, ABlockFileReplacedByAnotherFileIsForgotten) {
  const TargetConfig target = Image("img");
  Record(target, Written(kMiB, 8 * kMiB, "w"));
  // Made before the old one goes, so that it cannot get the old inode number.
  const std::string replacement = target.path + ".new";
  std::ofstream(replacement, std::ios::binary) << std::string(4096, '\0');
  ASSERT_EQ(std::rename(replacement.c_str(), target.path.c_str()), 0);
  EXPECT_EQ(Find(target).bytes, 0u);
  // Forgotten for good, not only while the file differs.
  EXPECT_EQ(Find(target).bytes, 0u);
}

TEST_F(WrittenPrefixesTest, AMissingBlockFileIsForgotten) {
  const TargetConfig target = Image("img");
  Record(target, Written(kMiB, 8 * kMiB, "w"));
  ASSERT_EQ(std::remove(target.path.c_str()), 0);
  EXPECT_EQ(Find(target).bytes, 0u);
}

TEST_F(WrittenPrefixesTest, ForgetAllForgetsEveryTarget) {
  const TargetConfig a = Image("a"), b = Image("b");
  Record(a, Written(kMiB, 8 * kMiB, "w"));
  Record(b, Written(kMiB, 8 * kMiB, "w"));
  prefixes_.ForgetAll();
  EXPECT_EQ(Find(a).bytes, 0u);
  EXPECT_EQ(Find(b).bytes, 0u);
}

TEST_F(WrittenPrefixesTest, ALoopDeviceIsToldApartByItsBackingFile) {
  // Any block device will do for its number; its loop attributes come from a fake sysfs.
  std::string device;
  for (const char* candidate :
       {"/dev/loop0", "/dev/loop1", "/dev/sda", "/dev/vda", "/dev/nvme0n1"}) {
    struct stat st;
    if (stat(candidate, &st) == 0 && S_ISBLK(st.st_mode)) device = candidate;
    if (!device.empty()) break;
  }
  if (device.empty()) GTEST_SKIP() << "no block device node to stat";
  struct stat st;
  ASSERT_EQ(stat(device.c_str(), &st), 0);
  const SystemPaths paths = SystemPaths::UnderRoot(dir() + "/root");
  const std::string loop_dir =
      common::StrCat(paths.sys_dev_block, "/", major(st.st_rdev), ":", minor(st.st_rdev), "/loop");
  std::filesystem::create_directories(loop_dir);
  const std::string backing = dir() + "/backing.img";
  std::ofstream(backing) << "x";
  std::ofstream(loop_dir + "/backing_file") << backing << "\n";
  std::ofstream(loop_dir + "/offset") << "0\n";

  TargetConfig target;
  target.name = "loop";
  target.kind = "block";
  target.path = device;
  target.disposable = true;
  EXPECT_THAT(Identity(target, paths), HasSubstr(" on " + backing + " "));
  WrittenPrefixes prefixes;
  prefixes.Record(target, Identity(target, paths), Written(kMiB, 8 * kMiB, "w"));
  EXPECT_EQ(prefixes.Find(target, Identity(target, paths)).bytes, kMiB);
  // Detached and attached again to another file at the same path.
  const std::string replacement = backing + ".new";
  std::ofstream(replacement) << "y";
  ASSERT_EQ(std::rename(replacement.c_str(), backing.c_str()), 0);
  EXPECT_EQ(prefixes.Find(target, Identity(target, paths)).bytes, 0u);
}

TEST_F(WrittenPrefixesTest, WhatAPhaseWroteCountsForTheDeviceItResolvedNotForThePathNow) {
  const TargetConfig target = Image("img");
  auto block = BlockTarget::Resolve(target);
  ASSERT_TRUE(block.ok()) << block.status();
  const std::string written_on = TargetIdentity(**block, SystemPaths());
  // The path leads to another file by the time the phase records what it wrote.
  const std::string replacement = target.path + ".new";
  std::ofstream(replacement, std::ios::binary) << std::string(4096, '\0');
  ASSERT_EQ(std::rename(replacement.c_str(), target.path.c_str()), 0);
  prefixes_.Record(target, written_on, Written(kMiB, 8 * kMiB, "w"));
  EXPECT_EQ(Find(target).bytes, 0u) << "the file now at the path was never written";
}

}  // namespace
}  // namespace stormark::agent
