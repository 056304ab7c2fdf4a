// The write interlocks: for network targets, signatures are read through the Device, whatever
// alignment it demands; for local ones, through the descriptor to be written (O_DIRECT or
// not), and users are found by the device's number in a (fake) sysfs.
#include "agent/devices/write_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "agent/devices/fault_device.h"
#include "agent/devices/memory_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

TargetConfig Lun() {
  TargetConfig target;
  target.name = "lun1";
  target.kind = "iscsi";
  target.path = "iscsi://10.0.0.6:3260/iqn.2003-01.org.example:disk1/1";
  target.disposable = true;
  return target;
}

// The fields of an ext4 superblock that FindSignatures checks, for writing at byte 1024.
struct Ext4Field {
  uint64_t offset;
  uint32_t value;
  size_t size;
};
constexpr Ext4Field kExt4[] = {{1024 + 56, 0xEF53, 2},
                               {1024 + 58, 1, 2},
                               {1024 + 24, 2, 4},
                               {1024 + 76, 1, 4},
                               {1024 + 96, 0x40 | 0x2, 4}};

void Put(MemoryDevice& device, uint64_t offset, const void* bytes, size_t n) {
  // Through a whole aligned block, as the device demands.
  alignas(4096) static char block[4096];
  const uint64_t start = offset / 4096 * 4096;
  ASSERT_TRUE(device.ReadAt(start, sizeof(block), block).ok());
  std::memcpy(block + (offset - start), bytes, n);
  ASSERT_TRUE(device.WriteAt(start, sizeof(block), block).ok());
}

TEST(CheckRemoteHoldsNoData, AnEmptyDeviceMayBeWritten) {
  MemoryDevice device(4 << 20, /*alignment=*/4096);
  EXPECT_TRUE(CheckRemoteHoldsNoData(Lun(), device).ok());
}

TEST(CheckRemoteHoldsNoData, AFilesystemOnTheServerIsRefused) {
  MemoryDevice device(4 << 20, /*alignment=*/4096);
  // An ext4 superblock at byte 1024: not an offset a 4 KiB-aligned device can read alone.
  const uint16_t magic = 0xEF53, state = 1;
  const uint32_t log_block = 2, revision = 1, incompat = 0x40 | 0x2;
  Put(device, 1024 + 56, &magic, 2);
  Put(device, 1024 + 58, &state, 2);
  Put(device, 1024 + 24, &log_block, 4);
  Put(device, 1024 + 76, &revision, 4);
  Put(device, 1024 + 96, &incompat, 4);
  const common::Status status = CheckRemoteHoldsNoData(Lun(), device);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("target 'lun1' (iscsi://10.0.0.6:3260/"));
  EXPECT_THAT(status.message(), HasSubstr("holds data: ext4 filesystem; refusing to write"));
}

TEST(CheckRemoteHoldsNoData, ADeviceThatCannotBeReadIsNotWrittenBlind) {
  MemoryDevice memory(4 << 20);
  FaultDevice device(memory);
  device.ArmReadFailure(1);
  const common::Status status = CheckRemoteHoldsNoData(Lun(), device);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("cannot check it for filesystems before writing"));
}

class LocalWriteGuardTest : public TempDirTest {
 protected:
  // A file of 4 MiB of zeros with, if asked, an ext4 superblock.
  std::string Image(bool ext4) {
    const std::string path = dir() + "/image";
    std::ofstream(path, std::ios::binary) << std::string(4 << 20, '\0');
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    for (const Ext4Field& field : kExt4) {
      if (!ext4) break;
      EXPECT_EQ(pwrite(fd, &field.value, field.size, static_cast<off_t>(field.offset)),
                static_cast<ssize_t>(field.size));
    }
    close(fd);
    return path;
  }

  // A fake sysfs directory for device `dev`, with `dev` written in it; returns its path.
  std::string SysDevice(const std::string& at, dev_t dev) {
    const std::string path = dir() + "/sys/dev/block/" + at;
    std::filesystem::create_directories(path);
    std::ofstream(path + "/dev") << major(dev) << ":" << minor(dev) << "\n";
    return path;
  }

  std::string sys_dev_block() const { return dir() + "/sys/dev/block"; }
};

TEST_F(LocalWriteGuardTest, SignaturesAreReadThroughADirectDescriptor) {
  const std::string path = Image(/*ext4=*/true);
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0 && errno == EINVAL) GTEST_SKIP() << "no O_DIRECT on this filesystem";
  ASSERT_GE(fd, 0);
  // Reading the 2 bytes at 1080 alone would fail with EINVAL on this descriptor.
  auto found = FindSignaturesThrough(fd, 4 << 20, 4096);
  close(fd);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(*found, ElementsAre("ext4 filesystem"));
}

TEST_F(LocalWriteGuardTest, NoSignatureOnZeros) {
  const std::string path = Image(/*ext4=*/false);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto found = FindSignaturesThrough(fd, 4 << 20, 512);
  close(fd);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(*found, IsEmpty());
}

TEST_F(LocalWriteGuardTest, ADescriptorThatCannotBeReadIsNotTakenForAnEmptyDevice) {
  const std::string path = Image(/*ext4=*/true);
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto found = FindSignaturesThrough(fd, 4 << 20, 512);
  close(fd);
  EXPECT_FALSE(found.ok());
}

TEST_F(LocalWriteGuardTest, ARegularFileNeedsOnlyToBeDisposable) {
  const std::string path = Image(/*ext4=*/true);  // An image may hold anything.
  TargetConfig target;
  target.name = "img";
  target.kind = "block";
  target.path = path;
  target.disposable = true;
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(CheckDescriptorWritable(target, fd, sys_dev_block()).ok());
  EXPECT_TRUE(CheckDisposable(target).ok());
  target.disposable = false;
  const common::Status refused = CheckDisposable(target);
  close(fd);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(),
              HasSubstr("target 'img' (" + path + ") is not marked 'disposable: true'"));
}

TEST_F(LocalWriteGuardTest, UsersAreFoundByTheDevicesNumberAndNamedByItsConfiguredPath) {
  const dev_t disk = makedev(7, 3), part = makedev(259, 9), dm = makedev(253, 0);
  const std::string sys = SysDevice("7:3", disk);
  // A partition loop3p1, and a device-mapper device stacked on the disk.
  std::filesystem::create_directories(sys + "/loop3p1");
  std::ofstream(sys + "/loop3p1/partition") << "1\n";
  std::ofstream(sys + "/loop3p1/dev") << "259:9\n";
  std::filesystem::create_directories(sys + "/holders/dm-0");
  std::ofstream(sys + "/holders/dm-0/dev") << "253:0\n";
  SysDevice("253:0", dm);
  SysDevice("259:9", part);
  const std::string mountinfo =
      "36 1 253:0 / /srv/data rw - ext4 /dev/mapper/vg-data rw\n"
      "37 1 259:9 / /mnt/p\\040one rw - xfs /dev/loop3p1 rw\n"
      "38 1 8:1 / / rw - ext4 /dev/sda1 rw\n";
  const std::vector<std::string> users =
      FindDeviceUsers(disk, "/dev/disk/by-id/wwn-0x5000", mountinfo, "", sys_dev_block());
  EXPECT_THAT(users, UnorderedElementsAre(HasSubstr("/dev/disk/by-id/wwn-0x5000 is held by dm-0"),
                                          "/dev/dm-0 is mounted at /srv/data",
                                          "/dev/loop3p1 is mounted at /mnt/p one"));
  EXPECT_THAT(FindDeviceUsers(makedev(7, 4), "/dev/loop4", mountinfo, "", sys_dev_block()),
              IsEmpty());
}

}  // namespace
}  // namespace stormark::agent
