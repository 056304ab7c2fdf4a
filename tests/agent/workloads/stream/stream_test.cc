#include "agent/targets/dir/dir_target.h"
#include "agent/workloads/stream/stream.h"

#include <fcntl.h>
#include <sys/stat.h>
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
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

void ExpectInvalid(const StreamSpec& spec, const std::string& what) {
  common::Status status = StreamWorkload::Validate(spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << spec.ShortDebugString();
  EXPECT_THAT(status.message(), HasSubstr(what)) << spec.ShortDebugString();
}

TEST(StreamWorkloadValidate, AcceptsAGoodSpec) {
  EXPECT_TRUE(StreamWorkload::Validate(Spec(StreamSpec::WRITE, 4 * kMiB, 1 << 20)).ok());
  EXPECT_TRUE(StreamWorkload::Validate(Spec(StreamSpec::READ, 12288, 3)).ok());
  StreamSpec direct = Spec(StreamSpec::WRITE, 4 * kMiB, 8192);
  direct.set_direct(true);
  direct.set_fdatasync(true);
  EXPECT_TRUE(StreamWorkload::Validate(direct).ok());
}

TEST(StreamWorkloadValidate, RejectsMissingDirection) {
  ExpectInvalid(Spec(StreamSpec::DIRECTION_UNSPECIFIED, kMiB, 4096), "rw must be");
}

TEST(StreamWorkloadValidate, RejectsZeroBlockSize) {
  ExpectInvalid(Spec(StreamSpec::WRITE, kMiB, 0), "bs must be at least 1");
}

TEST(StreamWorkloadValidate, RejectsHugeBlockSize) {
  ExpectInvalid(Spec(StreamSpec::WRITE, 128 * kMiB, 128 << 20), "bs 128M is over the limit of 64M");
}

TEST(StreamWorkloadValidate, RejectsZeroSize) {
  ExpectInvalid(Spec(StreamSpec::WRITE, 0, 4096), "size must be at least 1");
}

TEST(StreamWorkloadValidate, RejectsSizeNotAMultipleOfBlockSize) {
  ExpectInvalid(Spec(StreamSpec::WRITE, 10 * kMiB, 3072), "size 10M is not a multiple of bs 3k");
}

TEST(StreamWorkloadValidate, RejectsUnalignedDirectBlockSize) {
  StreamSpec spec = Spec(StreamSpec::WRITE, 1024 * 1000, 1000);
  spec.set_direct(true);
  ExpectInvalid(spec, "with direct, bs must be a multiple of 4k (got 1000)");
}

TEST(StreamWorkloadValidate, RejectsFdatasyncOnRead) {
  StreamSpec spec = Spec(StreamSpec::READ, kMiB, 4096);
  spec.set_fdatasync(true);
  ExpectInvalid(spec, "fdatasync applies to rw=write only");
}

class StreamWorkloadTest : public TempDirTest {
 protected:
  std::unique_ptr<StreamWorkload> Make(const StreamSpec& spec,
                                       const std::string& filesystem = "ext4") {
    common::StatusOr<std::unique_ptr<Dir>> target =
        OpenPhaseDir(ConfigWithTarget().targets[0], "phase1");
    EXPECT_TRUE(target.ok()) << target.status();
    if (!target.ok()) return nullptr;
    phase_dir_ = (*target)->Describe("");
    return std::make_unique<StreamWorkload>(spec, ConfigWithTarget().targets[0], std::move(*target),
                                            filesystem);
  }

  common::Status RunIt(StreamWorkload& workload, common::RecorderSet& recorders) {
    TimedRegion region(common::SystemClock(), recorders);
    RunContext ctx{common::SystemClock(), cancelled_, recorders, region};
    return workload.Run(ctx);
  }

  std::string DataPath() const { return phase_dir_ + "/stream.dat"; }

  int64_t FileSize(const std::string& path) const {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return -1;
    return st.st_size;
  }

  // Checks that every 4 KiB of the file starts with its own offset.
  void ExpectStamped(const std::string& path, uint64_t size) {
    const int fd = open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    std::vector<char> data(size);
    ASSERT_EQ(pread(fd, data.data(), size, 0), static_cast<ssize_t>(size));
    close(fd);
    for (uint64_t at = 0; at + 8 <= size; at += 4096) {
      uint64_t stamp;
      std::memcpy(&stamp, data.data() + at, sizeof(stamp));
      ASSERT_EQ(stamp, at) << "at offset " << at;
    }
  }

  std::atomic<bool> cancelled_{false};
  std::string phase_dir_;
};

TEST_F(StreamWorkloadTest, WriteWritesExactlySizeBytes) {
  const uint64_t size = 4 * kMiB;
  auto workload = Make(Spec(StreamSpec::WRITE, size, 64 * 1024));
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_EQ(FileSize(DataPath()), 0);

  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  common::Status status = RunIt(*workload, recorders);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(recorders.TotalBytes(), size);
  EXPECT_EQ(recorders.TotalOps(), size / (64 * 1024));
  EXPECT_EQ(recorders.Merged()->latency().count(), size / (64 * 1024));
  EXPECT_EQ(FileSize(DataPath()), static_cast<int64_t>(size));
  ExpectStamped(DataPath(), size);
}

TEST_F(StreamWorkloadTest, PrepareOfAReadStopsWhenCancelled) {
  auto workload = Make(Spec(StreamSpec::READ, 64 * kMiB, 1 << 20));
  ASSERT_NE(workload, nullptr);
  const std::atomic<bool> cancelled{true};
  std::vector<std::string> warnings;
  common::Status status = workload->Prepare(cancelled, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_LT(FileSize(DataPath()), static_cast<int64_t>(64 * kMiB));
}

TEST_F(StreamWorkloadTest, WriteWithoutSyncWarnsOfTheCache) {
  auto workload = Make(Spec(StreamSpec::WRITE, kMiB, 4096));
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, Contains(HasSubstr("possibly cache-dominated")));
}

TEST_F(StreamWorkloadTest, FdatasyncIsOneMoreOpWithNoBytes) {
  const uint64_t size = 2 * kMiB;
  StreamSpec spec = Spec(StreamSpec::WRITE, size, 1 << 20);
  spec.set_fdatasync(true);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, IsEmpty());
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunIt(*workload, recorders).ok());
  EXPECT_EQ(recorders.TotalBytes(), size);
  EXPECT_EQ(recorders.TotalOps(), 3u);
  EXPECT_EQ(FileSize(DataPath()), static_cast<int64_t>(size));
}

TEST_F(StreamWorkloadTest, OddBlockSizeWritesExactBytes) {
  const uint32_t bs = 3000;
  const uint64_t size = bs * 100;
  auto workload = Make(Spec(StreamSpec::WRITE, size, bs));
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunIt(*workload, recorders).ok());
  EXPECT_EQ(recorders.TotalBytes(), size);
  EXPECT_EQ(FileSize(DataPath()), static_cast<int64_t>(size));
}

TEST_F(StreamWorkloadTest, ReadPrepareLaysOutTheFileAndRunReadsIt) {
  const uint64_t size = 4 * kMiB;
  auto workload = Make(Spec(StreamSpec::READ, size, 128 * 1024));
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  common::Status prepared = workload->Prepare(kNotCancelled, &warnings);
  ASSERT_TRUE(prepared.ok()) << prepared;
  EXPECT_EQ(FileSize(DataPath()), static_cast<int64_t>(size));
  ExpectStamped(DataPath(), size);

  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  common::Status status = RunIt(*workload, recorders);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(recorders.TotalBytes(), size);
  EXPECT_EQ(recorders.TotalOps(), size / (128 * 1024));
}

TEST_F(StreamWorkloadTest, ReadOfAFileCutShortIsDataLoss) {
  const uint64_t size = 2 * kMiB;
  auto workload = Make(Spec(StreamSpec::READ, size, 65536));
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  ASSERT_EQ(truncate(DataPath().c_str(), kMiB + 100), 0);
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  common::Status status = RunIt(*workload, recorders);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(status.message(), HasSubstr("at offset 1048576"));
  EXPECT_THAT(status.message(), HasSubstr("transferred only 100 bytes"));
  EXPECT_EQ(recorders.TotalBytes(), kMiB);
}

TEST_F(StreamWorkloadTest, CancelledRunStopsWithCancelled) {
  auto workload = Make(Spec(StreamSpec::WRITE, 4 * kMiB, 4096));
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  cancelled_ = true;
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  common::Status status = RunIt(*workload, recorders);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_EQ(recorders.TotalBytes(), 0u);
}

TEST_F(StreamWorkloadTest, TmpfsIsWarnedAbout) {
  auto workload = Make(Spec(StreamSpec::WRITE, kMiB, 4096), "tmpfs");
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, Contains(HasSubstr("target 'scratch' is on tmpfs")));
}

TEST_F(StreamWorkloadTest, PrepareRefusesMoreThanTheFreeSpace) {
  auto workload = Make(Spec(StreamSpec::WRITE, uint64_t{1} << 60, 1 << 20));
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  common::Status status = workload->Prepare(kNotCancelled, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(status.message(), HasSubstr("free"));
  EXPECT_THAT(ListDir(phase_dir_), IsEmpty());
}

TEST_F(StreamWorkloadTest, PrepareRevalidatesTheSpec) {
  auto workload = Make(Spec(StreamSpec::WRITE, kMiB, 0));
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  EXPECT_EQ(workload->Prepare(kNotCancelled, &warnings).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StreamWorkloadTest, CleanupRemovesTheFileAndThePhaseDirectory) {
  std::ofstream(dir() + "/bystander") << "keep";
  auto workload = Make(Spec(StreamSpec::READ, kMiB, 65536));
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  ASSERT_TRUE(RunIt(*workload, recorders).ok());
  EXPECT_EQ(workload->Cleanup().removed, 2);
  EXPECT_EQ(workload->Cleanup().removed, 0);
  EXPECT_THAT(ListDir(dir()), ElementsAre("bystander"));
}

TEST_F(StreamWorkloadTest, DestructorRemovesTheFiles) {
  {
    auto workload = Make(Spec(StreamSpec::WRITE, kMiB, 65536));
    ASSERT_NE(workload, nullptr);
    std::vector<std::string> warnings;
    ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
    EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-phase1"));
  }
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(StreamWorkloadTest, DirectWriteWritesExactBytes) {
  const uint64_t size = 2 * kMiB;
  StreamSpec spec = Spec(StreamSpec::WRITE, size, 65536);
  spec.set_direct(true);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  const common::Status prepared = workload->Prepare(kNotCancelled, &warnings);
  if (absl::IsInvalidArgument(prepared) &&
      prepared.message().find("O_DIRECT") != std::string::npos) {
    GTEST_SKIP() << prepared;
  }
  ASSERT_TRUE(prepared.ok()) << prepared;
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  common::Status status = RunIt(*workload, recorders);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(recorders.TotalBytes(), size);
  EXPECT_EQ(FileSize(DataPath()), static_cast<int64_t>(size));
  ExpectStamped(DataPath(), size);
}

TEST_F(StreamWorkloadTest, DirectReadReadsExactBytes) {
  const uint64_t size = 2 * kMiB;
  StreamSpec spec = Spec(StreamSpec::READ, size, 65536);
  spec.set_direct(true);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  const common::Status prepared = workload->Prepare(kNotCancelled, &warnings);
  if (absl::IsInvalidArgument(prepared) &&
      prepared.message().find("O_DIRECT") != std::string::npos) {
    GTEST_SKIP() << prepared;
  }
  ASSERT_TRUE(prepared.ok()) << prepared;
  common::RecorderSet recorders(common::SystemClock().MonotonicNanos());
  common::Status status = RunIt(*workload, recorders);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(recorders.TotalBytes(), size);
}

}  // namespace
}  // namespace stormark::agent
