#include "agent/workloads/trim/trim.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <set>
#include <string>

#include "agent/devices/file_device.h"
#include "agent/devices/memory_device.h"
#include "agent/targets/target_caps.h"
#include "agent/workloads/workload_registry.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using stormark::v1::TrimSpec;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1 << 20;
const std::atomic<bool> kNotCancelled{false};

TrimSpec Spec(uint64_t size, uint64_t bs, uint64_t offset = 0, bool random = false) {
  TrimSpec spec;
  spec.set_size_bytes(size);
  spec.set_bs(bs);
  spec.set_offset_bytes(offset);
  spec.set_random(random);
  return spec;
}

common::Status RunTrim(TrimWorkload& workload, common::RecorderSet& recorders) {
  std::atomic<bool> cancelled{false};
  TimedRegion region(common::SystemClock(), recorders);
  RunContext ctx{common::SystemClock(), cancelled, recorders, region};
  return workload.Run(ctx);
}

TEST(TrimWorkload, DiscardsTheRegionAndNothingElse) {
  MemoryDevice device(8 * kMiB);
  const std::string ones(8 * kMiB, '\1');
  ASSERT_TRUE(device.WriteAt(0, ones.size(), ones.data()).ok());
  TrimWorkload trim(Spec(2 * kMiB, 256 * 1024, 4 * kMiB), device);
  std::vector<std::string> warnings;
  ASSERT_TRUE(trim.Prepare(kNotCancelled, &warnings).ok());
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunTrim(trim, recorders).ok());
  EXPECT_EQ(device.discards(), 8u);
  EXPECT_EQ(recorders.TotalBytes(), 2 * kMiB);
  EXPECT_EQ(device.Contents(0, 4 * kMiB), std::string(4 * kMiB, '\1'));
  EXPECT_EQ(device.Contents(4 * kMiB, 2 * kMiB), std::string(2 * kMiB, '\0'));
  EXPECT_EQ(device.Contents(6 * kMiB, 2 * kMiB), std::string(2 * kMiB, '\1'));
  EXPECT_TRUE(trim.WrittenFromStart().discarded);
}

// fio's trimwrite: each block discarded, then written, in that order; both are measured apart
// and the writes are flushed inside the run.
TEST(TrimWorkload, ThenWriteWritesEachBlockAfterItsDiscard) {
  MemoryDevice device(8 * kMiB);
  const std::string ones(8 * kMiB, '\1');
  ASSERT_TRUE(device.WriteAt(0, ones.size(), ones.data()).ok());
  TrimSpec spec = Spec(2 * kMiB, 256 * 1024, 4 * kMiB, /*random=*/true);
  spec.set_then_write(true);
  TrimWorkload trim(spec, device);
  std::vector<std::string> warnings;
  ASSERT_TRUE(trim.Prepare(kNotCancelled, &warnings).ok());
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunTrim(trim, recorders).ok());
  EXPECT_EQ(device.discards(), 8u);
  EXPECT_EQ(device.writes(), 1u + 8u);  // The set-up's write, then one per block.
  EXPECT_EQ(device.flushes(), 1u);
  EXPECT_EQ(recorders.TotalBytes(), 4 * kMiB);  // Discarded and written.
  // Outside the region, untouched; inside, written again with data that is neither the old
  // nor zeros, and no two 4 KiB blocks alike.
  EXPECT_EQ(device.Contents(0, 4 * kMiB), std::string(4 * kMiB, '\1'));
  EXPECT_EQ(device.Contents(6 * kMiB, 2 * kMiB), std::string(2 * kMiB, '\1'));
  std::set<std::string> blocks;
  for (uint64_t at = 4 * kMiB; at < 6 * kMiB; at += 4096) {
    const std::string block = device.Contents(at, 4096);
    EXPECT_NE(block, std::string(4096, '\0'));
    EXPECT_NE(block, std::string(4096, '\1'));
    blocks.insert(block);
  }
  EXPECT_EQ(blocks.size(), 512u);
  stormark::v1::PhaseResult result;
  result.set_elapsed_nanos(1'000'000'000);
  trim.AddToResult(&result);
  ASSERT_EQ(result.measurements_size(), 2);
  EXPECT_EQ(result.measurements(0).name(), "trim");
  EXPECT_EQ(result.measurements(0).ops(), 8u);
  EXPECT_EQ(result.measurements(1).name(), "write");
  EXPECT_EQ(result.measurements(1).bytes(), 2 * kMiB);
  EXPECT_GT(result.measurements(1).series_size(), 0);
  EXPECT_EQ(result.resolved().at("then_write"), "true");
}

TEST(TrimWorkload, SizeZeroIsTheRestOfTheDeviceAndTheLastRequestIsShort) {
  MemoryDevice device(3 * kMiB + 64 * 1024);
  TrimWorkload trim(Spec(0, kMiB, kMiB), device);
  std::vector<std::string> warnings;
  ASSERT_TRUE(trim.Prepare(kNotCancelled, &warnings).ok());
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunTrim(trim, recorders).ok());
  EXPECT_EQ(recorders.TotalBytes(), 2 * kMiB + 64 * 1024);
  EXPECT_EQ(device.discards(), 3u);
}

TEST(TrimWorkload, RandomOrderTouchesEveryBlockOnceAndRepeatsWithItsSeed) {
  TrimSpec spec = Spec(64 * kMiB, kMiB, 0, true);
  const std::vector<uint64_t> order = TrimWorkload::RequestOffsets(spec, 64 * kMiB);
  ASSERT_EQ(order.size(), 64u);
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
  EXPECT_EQ(std::set<uint64_t>(order.begin(), order.end()).size(), 64u);
  EXPECT_EQ(TrimWorkload::RequestOffsets(spec, 64 * kMiB), order);
  spec.set_seed(7);
  EXPECT_NE(TrimWorkload::RequestOffsets(spec, 64 * kMiB), order);
  spec.set_random(false);
  const std::vector<uint64_t> sequential = TrimWorkload::RequestOffsets(spec, 64 * kMiB);
  EXPECT_TRUE(std::is_sorted(sequential.begin(), sequential.end()));
}

TEST(TrimWorkload, RefusesARegionPastTheEndInOneLine) {
  MemoryDevice device(4 * kMiB);
  std::vector<std::string> warnings;
  TrimWorkload past(Spec(0, kMiB, 4 * kMiB), device);
  EXPECT_THAT(std::string(past.Prepare(kNotCancelled, &warnings).message()),
              HasSubstr("is past the end of"));
  TrimWorkload over(Spec(4 * kMiB, kMiB, kMiB), device);
  EXPECT_THAT(std::string(over.Prepare(kNotCancelled, &warnings).message()),
              HasSubstr("does not fit"));
}

// A regular file: holes are punched, and the file keeps its size.
TEST(TrimWorkload, PunchesHolesInAFile) {
  char path[] = "/tmp/stormark-trim-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string data(4 * kMiB, 'x');
  ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
  {
    FileDeviceOptions options;
    options.writable = true;
    auto device = FileDevice::Open(path, options);
    ASSERT_TRUE(device.ok()) << device.status();
    ASSERT_TRUE((*device)->caps().discard);
    TrimWorkload trim(Spec(2 * kMiB, kMiB), **device);
    std::vector<std::string> warnings;
    ASSERT_TRUE(trim.Prepare(kNotCancelled, &warnings).ok());
    common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
    const common::Status run = RunTrim(trim, recorders);
    if (absl::IsInternal(run) &&
        std::string(run.message()).find("not supported") != std::string::npos) {
      unlink(path);
      GTEST_SKIP() << "this filesystem punches no holes: " << run;
    }
    ASSERT_TRUE(run.ok()) << run;
  }
  struct stat st;
  ASSERT_EQ(stat(path, &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 4 * kMiB);
  EXPECT_LE(static_cast<uint64_t>(st.st_blocks) * 512, 2 * kMiB + 64 * 1024);
  std::string back(4 * kMiB, '?');
  const int rfd = open(path, O_RDONLY);
  ASSERT_EQ(pread(rfd, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
  close(rfd);
  unlink(path);
  EXPECT_EQ(back.substr(0, 2 * kMiB), std::string(2 * kMiB, '\0'));
  EXPECT_EQ(back.substr(2 * kMiB), std::string(2 * kMiB, 'x'));
}

TEST(TrimModule, RunsOnBlockTargetsOnly) {
  const WorkloadModule* module = FindWorkload("trim");
  ASSERT_NE(module, nullptr);
  stormark::v1::PhaseSpec spec;
  spec.mutable_trim();
  for (const char* kind : {"dir", "null", "nbd", "iscsi", "aoe"}) {
    TargetConfig target{.name = "t", .kind = kind, .path = "/x"};
    const common::Status status = module->check_target(spec, target, CapsOf(target));
    EXPECT_THAT(std::string(status.message()), HasSubstr("trim runs on a block target")) << kind;
  }
  TargetConfig block{.name = "disk", .kind = "block", .path = "/dev/loop0"};
  EXPECT_TRUE(module->check_target(spec, block, CapsOf(block)).ok());
}

}  // namespace
}  // namespace stormark::agent
