// The write interlock for network targets: signatures are read through the Device, whatever
// alignment it demands.
#include "agent/devices/write_guard.h"

#include <cstring>
#include <string>

#include "agent/devices/fault_device.h"
#include "agent/devices/memory_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

TargetConfig Lun() {
  TargetConfig target;
  target.name = "lun1";
  target.kind = "iscsi";
  target.path = "iscsi://10.0.0.6:3260/iqn.2003-01.org.example:disk1/1";
  target.disposable = true;
  return target;
}

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

}  // namespace
}  // namespace stormark::agent
