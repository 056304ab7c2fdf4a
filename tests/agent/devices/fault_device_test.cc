#include "agent/devices/fault_device.h"

#include <string>

#include "agent/devices/memory_device.h"
#include "agent/devices/null_device.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

class FaultDeviceTest : public ::testing::Test {
 protected:
  MemoryDevice memory_{64 * 1024};
  FaultDevice faulty_{memory_};
  std::string block_ = std::string(4096, 'x');

  void Write(uint64_t offset) { ASSERT_TRUE(faulty_.WriteAt(offset, 4096, block_.data()).ok()); }
};

TEST_F(FaultDeviceTest, PassesThroughUntilAFaultFires) {
  faulty_.ArmWrite(2, Fault::kDrop);
  Write(0);
  EXPECT_EQ(memory_.Contents(0, 4096), block_);
  Write(4096);  // Dropped, yet reported done.
  EXPECT_EQ(memory_.Contents(4096, 4096), std::string(4096, '\0'));
  Write(8192);
  EXPECT_EQ(memory_.Contents(8192, 4096), block_);
  EXPECT_EQ(faulty_.fired(), std::vector<uint64_t>{4096});
}

TEST_F(FaultDeviceTest, MisdirectedWriteLandsElsewhere) {
  faulty_.ArmWrite(1, Fault::kMisdirect, 8192);
  Write(4096);
  EXPECT_EQ(memory_.Contents(4096, 4096), std::string(4096, '\0'));
  EXPECT_EQ(memory_.Contents(12288, 4096), block_);
}

TEST_F(FaultDeviceTest, TornWriteStopsPartWay) {
  faulty_.ArmWrite(1, Fault::kTear, 1000);
  Write(0);
  EXPECT_EQ(memory_.Contents(0, 1000), std::string(1000, 'x'));
  EXPECT_EQ(memory_.Contents(1000, 3096), std::string(3096, '\0'));
}

TEST_F(FaultDeviceTest, FailuresReportEio) {
  faulty_.ArmWrite(1, Fault::kFail);
  EXPECT_FALSE(faulty_.WriteAt(0, 4096, block_.data()).ok());
  faulty_.ArmReadFailure(1);
  std::string buf(4096, '\0');
  const common::Status status = faulty_.ReadAt(0, 4096, buf.data());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("Input/output error"), std::string::npos);
}

TEST_F(FaultDeviceTest, QueueGoesThroughTheWrapper) {
  faulty_.ArmWrite(1, Fault::kDrop);
  auto queue = faulty_.OpenQueue(4);
  ASSERT_TRUE(queue.ok());
  IoRequest write{IoOp::kWrite, 0, 4096, block_.data(), 5};
  ASSERT_TRUE((*queue)->Submit({&write, 1}).ok());
  IoCompletion done;
  ASSERT_EQ(*(*queue)->Reap(1, {&done, 1}), 1u);
  EXPECT_EQ(done.tag, 5u);
  EXPECT_EQ(done.result, 4096);
  EXPECT_EQ(memory_.writes(), 0u);  // The wrapper dropped it; the memory never saw it.
}

TEST(MemoryDevice, EnforcesItsDeclaredAlignment) {
  MemoryDevice memory(65536, 4096);
  EXPECT_TRUE(memory.caps().direct);
  alignas(4096) static char buf[8192];
  EXPECT_TRUE(memory.ReadAt(4096, 4096, buf).ok());
  EXPECT_FALSE(memory.ReadAt(512, 4096, buf).ok());
  EXPECT_FALSE(memory.ReadAt(4096, 512, buf).ok());
}

TEST(NullDevice, CompletesEverythingWithoutData) {
  NullDevice null(uint64_t{1} << 40);
  char buf[16] = "unchanged";
  EXPECT_TRUE(null.ReadAt(uint64_t{1} << 39, 16, buf).ok());
  EXPECT_STREQ(buf, "unchanged");
  EXPECT_TRUE(null.WriteAt(0, 16, buf).ok());
  EXPECT_TRUE(null.Flush(false).ok());
  EXPECT_EQ(null.size(), uint64_t{1} << 40);
}

}  // namespace
}  // namespace stormark::agent
