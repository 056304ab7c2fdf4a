// The stream workload on a Device (any block or network target) and through the agent's own
// opening of block and null targets: what a dir target's stream.dat does not exercise.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "agent/devices/device_wrapper.h"
#include "agent/devices/fault_device.h"
#include "agent/devices/memory_device.h"
#include "agent/workloads/stream/stream.h"
#include "common/clock.h"
#include "common/recorder.h"
#include "common/units.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"
#include "tests/agent/workloads/stream/stream_test_util.h"

namespace stormark::agent {
namespace {

using stormark::v1::StreamSpec;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Runs a prepared workload's timed region to the end.
common::Status RunStream(StreamWorkload& workload, common::RecorderSet& recorders) {
  const std::atomic<bool> cancelled{false};
  TimedRegion region(common::SystemClock(), recorders);
  RunContext ctx{common::SystemClock(), cancelled, recorders, region};
  return workload.Run(ctx);
}

// The stamp stream writes at the start of every 4 KiB: its own offset.
uint64_t StampAt(const std::string& data, uint64_t at) {
  uint64_t stamp = 0;
  std::memcpy(&stamp, data.data() + at, sizeof(stamp));
  return stamp;
}

// Every 4 KiB of `data` (which starts at offset 0) carries its offset.
void ExpectStampedData(const std::string& data) {
  ASSERT_EQ(data.size() % 4096, 0u);
  for (uint64_t at = 0; at < data.size(); at += 4096) ASSERT_EQ(StampAt(data, at), at);
}

// A device opened for reading only, as a target without `disposable: true` is.
class ReadOnlyDevice final : public DeviceWrapper {
 public:
  using DeviceWrapper::DeviceWrapper;
  DeviceCaps caps() const override {
    DeviceCaps caps = DeviceWrapper::caps();
    caps.writable = false;
    return caps;
  }
};

// A device with counters of its own, as the network devices keep.
class CountingDevice final : public DeviceWrapper {
 public:
  using DeviceWrapper::DeviceWrapper;
  std::map<std::string, std::string> Stats() const override { return {{"test.frames", "7"}}; }
};

TEST(StreamOnADevice, WriteCoversTheDeviceFromTheStartWithStampedData) {
  MemoryDevice memory(4 * kMiB);
  StreamWorkload workload(Spec(StreamSpec::WRITE, 2 * kMiB, 64 * 1024), memory);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  // No page cache in front of this device, so no cache warning; nothing written yet.
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_EQ(memory.writes(), 0u);

  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  const common::Status status = RunStream(workload, recorders);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(recorders.TotalBytes(), 2 * kMiB);
  EXPECT_EQ(recorders.TotalOps(), 32u);
  EXPECT_EQ(memory.writes(), 32u);
  EXPECT_EQ(memory.flushes(), 0u);
  ExpectStampedData(memory.Contents(0, 2 * kMiB));
  // Nothing beyond size is touched.
  EXPECT_EQ(memory.Contents(2 * kMiB, 4096), std::string(4096, '\0'));
}

TEST(StreamOnADevice, FdatasyncFlushesTheDeviceInsideTheRun) {
  MemoryDevice memory(kMiB);
  StreamSpec spec = Spec(StreamSpec::WRITE, kMiB, 256 * 1024);
  spec.set_fdatasync(true);
  StreamWorkload workload(spec, memory);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_EQ(memory.flushes(), 0u);
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunStream(workload, recorders).ok());
  EXPECT_EQ(memory.flushes(), 1u);
  EXPECT_EQ(recorders.TotalOps(), 5u);  // Four writes and the flush.
  EXPECT_EQ(recorders.TotalBytes(), kMiB);
}

TEST(StreamOnADevice, ReadLaysOutTheDataFirstWhenTheDeviceIsWritable) {
  MemoryDevice memory(8 * kMiB);
  StreamWorkload workload(Spec(StreamSpec::READ, 4 * kMiB, kMiB), memory);
  std::vector<std::string> warnings;
  const common::Status prepared = workload.Prepare(kNotCancelled, &warnings);
  ASSERT_TRUE(prepared.ok()) << prepared;
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_GT(memory.writes(), 0u);
  EXPECT_EQ(memory.flushes(), 1u);
  EXPECT_EQ(memory.reads(), 0u);
  ExpectStampedData(memory.Contents(0, 4 * kMiB));
  EXPECT_EQ(memory.Contents(4 * kMiB, 4096), std::string(4096, '\0'));

  const uint64_t laid_out = memory.writes();
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunStream(workload, recorders).ok());
  EXPECT_EQ(memory.reads(), 4u);
  EXPECT_EQ(memory.writes(), laid_out);
  EXPECT_EQ(recorders.TotalBytes(), 4 * kMiB);
}

TEST(StreamOnADevice, ReadOfAReadOnlyDeviceWarnsOfUnwrittenSpace) {
  MemoryDevice memory(kMiB);
  ReadOnlyDevice device(memory);
  StreamWorkload workload(Spec(StreamSpec::READ, kMiB, 65536), device);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_EQ(memory.writes(), 0u);
  EXPECT_THAT(warnings, ElementsAre(AllOf(HasSubstr("memory device is not disposable"),
                                          HasSubstr("space never written"))));
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunStream(workload, recorders).ok());
  EXPECT_EQ(recorders.TotalBytes(), kMiB);
}

TEST(StreamOnADevice, SizeBeyondTheDeviceIsOneClearErrorBeforeAnyWrite) {
  MemoryDevice memory(kMiB);
  StreamWorkload workload(Spec(StreamSpec::READ, 2 * kMiB, 65536), memory);
  std::vector<std::string> warnings;
  const common::Status status = workload.Prepare(kNotCancelled, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_EQ(status.message(), "stream: size " + common::FormatBytes(2 * kMiB) +
                                  " does not fit memory device, which holds " +
                                  common::FormatBytes(kMiB));
  EXPECT_EQ(memory.writes(), 0u);
}

TEST(StreamOnADevice, DirectBlockSizeMustSuitTheDeviceAlignment) {
  MemoryDevice memory(kMiB, /*alignment=*/8192);
  StreamSpec spec = Spec(StreamSpec::WRITE, kMiB, 4096);
  spec.set_direct(true);
  StreamWorkload workload(spec, memory);
  std::vector<std::string> warnings;
  const common::Status status = workload.Prepare(kNotCancelled, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("bs must be a multiple of 8192 bytes"));
}

TEST(StreamOnADevice, IoErrorFailsTheRunNamingTheOffset) {
  MemoryDevice memory(kMiB);
  FaultDevice fault(memory);
  StreamWorkload workload(Spec(StreamSpec::WRITE, kMiB, 65536), fault);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  fault.ArmWrite(3, Fault::kFail);
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  const common::Status status = RunStream(workload, recorders);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("write of 65536 bytes at offset 131072"));
  EXPECT_EQ(recorders.TotalBytes(), 2u * 65536);
}

TEST(StreamOnADevice, CancelledLayoutStopsWithCancelled) {
  MemoryDevice memory(4 * kMiB);
  StreamWorkload workload(Spec(StreamSpec::READ, 4 * kMiB, kMiB), memory);
  const std::atomic<bool> cancelled{true};
  std::vector<std::string> warnings;
  EXPECT_EQ(workload.Prepare(cancelled, &warnings).code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(memory.writes(), 0u);
}

// What earlier phases wrote on the device, as the phase runner keeps it.
WrittenPrefix Earlier(uint64_t bytes, uint64_t device_size) {
  WrittenPrefix earlier;
  earlier.bytes = bytes;
  earlier.device_size = device_size;
  earlier.phase_id = "seq-write";
  return earlier;
}

TEST(StreamOnADevice, ReadOfWhatAnEarlierPhaseWroteIsNotLaidOutAndSaysSo) {
  MemoryDevice memory(8 * kMiB);
  StreamWorkload workload(Spec(StreamSpec::READ, 4 * kMiB, kMiB), memory,
                          Earlier(4 * kMiB, 8 * kMiB));
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_EQ(memory.writes(), 0u);
  EXPECT_THAT(warnings, ElementsAre(AllOf(HasSubstr("no layout"),
                                          HasSubstr("phase 'seq-write' (a write) wrote"),
                                          HasSubstr(common::FormatBytes(4 * kMiB)))));
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunStream(workload, recorders).ok());
  EXPECT_EQ(recorders.TotalBytes(), 4 * kMiB);
  EXPECT_EQ(workload.WrittenFromStart().bytes, 0u);  // It wrote nothing itself.
}

TEST(StreamOnADevice, ReadBeyondWhatAnEarlierPhaseWroteIsLaidOutAndCounted) {
  MemoryDevice memory(8 * kMiB);
  StreamWorkload workload(Spec(StreamSpec::READ, 4 * kMiB, kMiB), memory,
                          Earlier(4 * kMiB - 4096, 8 * kMiB));
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, IsEmpty());
  EXPECT_GT(memory.writes(), 0u);
  EXPECT_EQ(workload.WrittenFromStart().bytes, 4 * kMiB);
  EXPECT_EQ(workload.WrittenFromStart().device_size, 8 * kMiB);
}

TEST(StreamOnADevice, EarlierWriteOfADeviceOfAnotherSizeIsNotTrusted) {
  MemoryDevice memory(8 * kMiB);
  StreamWorkload workload(Spec(StreamSpec::READ, 4 * kMiB, kMiB), memory,
                          Earlier(16 * kMiB, 16 * kMiB));
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_GT(memory.writes(), 0u);
  EXPECT_THAT(warnings, IsEmpty());
}

TEST(StreamOnADevice, WriteStoppedByAnErrorCountsOnlyTheBlocksThatCompleted) {
  MemoryDevice memory(kMiB);
  FaultDevice fault(memory);
  StreamWorkload workload(Spec(StreamSpec::WRITE, kMiB, 65536), fault);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_EQ(workload.WrittenFromStart().bytes, 0u);
  fault.ArmWrite(3, Fault::kFail);
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  EXPECT_FALSE(RunStream(workload, recorders).ok());
  EXPECT_EQ(workload.WrittenFromStart().bytes, 2u * 65536);
  EXPECT_EQ(workload.WrittenFromStart().device_size, kMiB);
}

TEST(StreamOnADevice, CompletedWriteCountsItsWholeSize) {
  MemoryDevice memory(2 * kMiB);
  StreamWorkload workload(Spec(StreamSpec::WRITE, kMiB, 65536), memory);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunStream(workload, recorders).ok());
  EXPECT_EQ(workload.WrittenFromStart().bytes, kMiB);
}

TEST(StreamOnADevice, ResultNamesTheDeviceAndCarriesItsCounters) {
  MemoryDevice memory(kMiB);
  CountingDevice device(memory);
  StreamWorkload workload(Spec(StreamSpec::WRITE, kMiB, kMiB), device);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunStream(workload, recorders).ok());
  stormark::v1::PhaseResult result;
  workload.AddToResult(&result);
  EXPECT_EQ(result.resolved().at("device"), "memory device");
  ASSERT_EQ(result.device_stats().count("test.frames"), 1u);
  EXPECT_EQ(result.device_stats().at("test.frames"), "7");
}

// Block and null targets, through the agent's own opening of them (a block target here is a
// regular file: no root needed).
class StreamBlockTargetTest : public TempDirTest {
 protected:
  // A block target on a new file of `size` zero bytes.
  TargetConfig Image(const std::string& name, uint64_t size, bool disposable) {
    TargetConfig target;
    target.name = name;
    target.kind = "block";
    target.path = dir() + "/" + name + ".img";
    target.disposable = disposable;
    // Sparse, as a fresh image is: a disposable one gets laid out before a read.
    std::ofstream(target.path, std::ios::binary).close();
    EXPECT_EQ(truncate(target.path.c_str(), static_cast<off_t>(size)), 0);
    return target;
  }

  static std::string Contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
};

TEST_F(StreamBlockTargetTest, WriteWritesTheTargetInPlace) {
  const TargetConfig target = Image("img", 8 * kMiB, /*disposable=*/true);
  StreamSpec spec = Spec(StreamSpec::WRITE, 4 * kMiB, kMiB);
  spec.set_fdatasync(true);
  StreamWorkload workload(spec, target, "ext4");
  std::vector<std::string> warnings;
  const common::Status prepared = workload.Prepare(kNotCancelled, &warnings);
  ASSERT_TRUE(prepared.ok()) << prepared;
  EXPECT_THAT(warnings, IsEmpty());
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  const common::Status status = RunStream(workload, recorders);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(recorders.TotalBytes(), 4 * kMiB);

  stormark::v1::PhaseResult result;
  workload.AddToResult(&result);
  EXPECT_THAT(result.resolved().at("device"), HasSubstr(target.path));
  EXPECT_EQ(workload.Cleanup().removed, 0);
  // Used in place: the file keeps its size; the stream's data is at its start.
  const std::string data = Contents(target.path);
  ASSERT_EQ(data.size(), 8 * kMiB);
  ExpectStampedData(data.substr(0, 4 * kMiB));
  EXPECT_EQ(data.substr(4 * kMiB), std::string(4 * kMiB, '\0'));
}

TEST_F(StreamBlockTargetTest, BufferedWriteWithoutFdatasyncIsFlaggedAsCacheDominated) {
  const TargetConfig target = Image("img", kMiB, /*disposable=*/true);
  StreamWorkload workload(Spec(StreamSpec::WRITE, kMiB, 65536), target, "ext4");
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, Contains(HasSubstr("possibly cache-dominated")));
}

TEST_F(StreamBlockTargetTest, WriteToATargetNotDisposableIsRefused) {
  const TargetConfig target = Image("ro", kMiB, /*disposable=*/false);
  StreamWorkload workload(Spec(StreamSpec::WRITE, kMiB, 65536), target, "ext4");
  std::vector<std::string> warnings;
  const common::Status status = workload.Prepare(kNotCancelled, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  EXPECT_THAT(status.message(), HasSubstr("is not marked 'disposable: true'"));
  EXPECT_EQ(Contents(target.path), std::string(kMiB, '\0'));
}

TEST_F(StreamBlockTargetTest, ReadOfADisposableFileHoldingDataAllThroughIsNotLaidOut) {
  const TargetConfig target = Image("img", 4 * kMiB, /*disposable=*/true);
  std::ofstream(target.path, std::ios::binary) << std::string(4 * kMiB, '\x5a');
  StreamWorkload workload(Spec(StreamSpec::READ, 2 * kMiB, 65536), target, "ext4");
  std::vector<std::string> warnings;
  const common::Status prepared = workload.Prepare(kNotCancelled, &warnings);
  ASSERT_TRUE(prepared.ok()) << prepared;
  EXPECT_THAT(warnings, Contains(HasSubstr("no layout: " + target.path +
                                           " holds data all through the 2 MiB this reads")));
  EXPECT_EQ(Contents(target.path), std::string(4 * kMiB, '\x5a')) << "nothing written";
  EXPECT_EQ(workload.WrittenFromStart().bytes, 0u) << "and nothing counted as written by us";
}

TEST_F(StreamBlockTargetTest, ReadOfADisposableTargetLaysOutTheDataFirst) {
  const TargetConfig target = Image("img", 4 * kMiB, /*disposable=*/true);
  StreamWorkload workload(Spec(StreamSpec::READ, 2 * kMiB, 65536), target, "ext4");
  std::vector<std::string> warnings;
  const common::Status prepared = workload.Prepare(kNotCancelled, &warnings);
  ASSERT_TRUE(prepared.ok()) << prepared;
  EXPECT_THAT(warnings, Not(Contains(HasSubstr("not disposable"))));
  const std::string data = Contents(target.path);
  ExpectStampedData(data.substr(0, 2 * kMiB));
  EXPECT_EQ(data.substr(2 * kMiB), std::string(2 * kMiB, '\0'));
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunStream(workload, recorders).ok());
  EXPECT_EQ(recorders.TotalBytes(), 2 * kMiB);
}

TEST_F(StreamBlockTargetTest, ReadOfATargetNotDisposableReadsInPlaceAndSaysWhatHoldsNoData) {
  // A file holding data all through: nothing to say.
  const TargetConfig written = Image("written", kMiB, /*disposable=*/false);
  std::ofstream(written.path, std::ios::binary) << std::string(kMiB, '\0');
  StreamWorkload read_written(Spec(StreamSpec::READ, kMiB, 65536), written, "ext4");
  std::vector<std::string> warnings;
  ASSERT_TRUE(read_written.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, Not(Contains(HasSubstr("no data"))));
  EXPECT_THAT(warnings, Not(Contains(HasSubstr("not disposable"))));

  // A sparse one: how much of the read holds no data, and nothing written to it.
  const TargetConfig target = Image("ro", kMiB, /*disposable=*/false);
  StreamWorkload workload(Spec(StreamSpec::READ, kMiB, 65536), target, "ext4");
  warnings.clear();
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, Contains(HasSubstr("target 'ro': 1 MiB of the 1 MiB this phase reads "
                                           "hold no data in " +
                                           target.path)));
  EXPECT_EQ(Contents(target.path), std::string(kMiB, '\0'));
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunStream(workload, recorders).ok());
  EXPECT_EQ(recorders.TotalBytes(), kMiB);
}

TEST_F(StreamBlockTargetTest, SizeBeyondTheTargetNamesTheTargetAndBothSizes) {
  const TargetConfig target = Image("img", kMiB, /*disposable=*/true);
  StreamWorkload workload(Spec(StreamSpec::WRITE, 2 * kMiB, 65536), target, "ext4");
  std::vector<std::string> warnings;
  const common::Status status = workload.Prepare(kNotCancelled, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_THAT(status.message(), HasSubstr("stream: size " + common::FormatBytes(2 * kMiB) +
                                          " does not fit target 'img' on " + target.path));
  EXPECT_THAT(status.message(), HasSubstr("which holds " + common::FormatBytes(kMiB)));
}

TEST_F(StreamBlockTargetTest, NullTargetSaysThatNoDataMoves) {
  TargetConfig target;
  target.name = "sink";
  target.kind = "null";
  target.size = kDefaultNullSize;
  StreamWorkload workload(Spec(StreamSpec::READ, 4 * kMiB, kMiB), target, "");
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload.Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("null target: no data moves")));
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunStream(workload, recorders).ok());
  EXPECT_EQ(recorders.TotalBytes(), 4 * kMiB);
}

}  // namespace
}  // namespace stormark::agent
