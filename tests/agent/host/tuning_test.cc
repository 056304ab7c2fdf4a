#include "agent/host/tuning.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

// A fake /sys/class/block with disk "sdz" and its partition "sdz1".
class DeviceTuningTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    for (const char* d : {"/sdz", "/sdz/queue", "/sdz/device", "/sdz/sdz1", "/vdz", "/vdz/queue"}) {
      ASSERT_EQ(mkdir((dir() + d).c_str(), 0700), 0);
    }
    Write("/sdz/queue/scheduler", "mq-deadline\n");
    Write("/sdz/queue/read_ahead_kb", "128\n");
    Write("/sdz/queue/nr_requests", "64\n");
    Write("/sdz/device/queue_depth", "32\n");
    Write("/sdz/sdz1/partition", "1\n");
    Write("/vdz/queue/read_ahead_kb", "128\n");
    // As in sysfs: /sys/class/block/sdz1 -> .../sdz/sdz1.
    ASSERT_EQ(symlink((dir() + "/sdz/sdz1").c_str(), (dir() + "/sdz1").c_str()), 0);
  }
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(dir() + path) << text;
  }
  std::string Read(const std::string& path) {
    std::ifstream in(dir() + path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST_F(DeviceTuningTest, AppliesToThePartitionsDiskAndRestores) {
  {
    auto tuning = DeviceTuning::Apply(
        "/dev/sdz1", {{"read_ahead_kb", "4096"}, {"nr_requests", "256"}, {"scheduler", "none"}},
        dir());
    ASSERT_TRUE(tuning.ok()) << tuning.status();
    EXPECT_EQ(Read("/sdz/queue/read_ahead_kb"), "4096");
    EXPECT_EQ(Read("/sdz/queue/nr_requests"), "256");
    EXPECT_EQ(Read("/sdz/queue/scheduler"), "none");
    EXPECT_EQ((*tuning)->report().at("read_ahead_kb"), "4096");
    EXPECT_EQ((*tuning)->report().at("read_ahead_kb.before"), "128");
    EXPECT_EQ((*tuning)->report().at("scheduler.before"), "mq-deadline");
  }
  EXPECT_EQ(Read("/sdz/queue/read_ahead_kb"), "128");
  EXPECT_EQ(Read("/sdz/queue/nr_requests"), "64");
  EXPECT_EQ(Read("/sdz/queue/scheduler"), "mq-deadline");
}

TEST_F(DeviceTuningTest, QueueDepthIsTheScsiDevices) {
  auto tuning = DeviceTuning::Apply("/dev/sdz", {{"queue_depth", "1"}}, dir());
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_EQ(Read("/sdz/device/queue_depth"), "1");
  auto none = DeviceTuning::Apply("/dev/vdz", {{"queue_depth", "1"}}, dir());
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("only SCSI disks"));
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("/dev/vdz"));
}

TEST_F(DeviceTuningTest, AFailureRestoresWhatWasChangedAndNamesTheKnob) {
  auto tuning =
      DeviceTuning::Apply("/dev/vdz", {{"read_ahead_kb", "512"}, {"scheduler", "bfq"}}, dir());
  ASSERT_FALSE(tuning.ok());
  EXPECT_THAT(std::string(tuning.status().message()), HasSubstr("scheduler"));
  EXPECT_EQ(Read("/vdz/queue/read_ahead_kb"), "128\n");
}

TEST_F(DeviceTuningTest, NoBlockDeviceIsAClearError) {
  auto tuning = DeviceTuning::Apply("tmpfs", {{"read_ahead_kb", "512"}}, dir());
  ASSERT_FALSE(tuning.ok());
  EXPECT_THAT(std::string(tuning.status().message()), HasSubstr("no block device"));
  EXPECT_FALSE(DeviceTuning::Apply("/dev/sdz", {{"rotational", "0"}}, dir()).ok());
}

TEST_F(DeviceTuningTest, ADeviceIsFoundByItsNumberWhateverNamedIt) {
  // As in sysfs: /sys/dev/block/MAJ:MIN -> the device's directory.
  ASSERT_EQ(mkdir((dir() + "/dev-block").c_str(), 0700), 0);
  ASSERT_EQ(symlink((dir() + "/sdz/sdz1").c_str(), (dir() + "/dev-block/8:17").c_str()), 0);
  {
    auto tuning = DeviceTuning::ApplyToDevice(makedev(8, 17), "/dev/disk/by-id/wwn-0x5000-part1",
                                              {{"read_ahead_kb", "1024"}}, dir() + "/dev-block");
    ASSERT_TRUE(tuning.ok()) << tuning.status();
    EXPECT_EQ(Read("/sdz/queue/read_ahead_kb"), "1024") << "a partition's queue is its disk's";
  }
  EXPECT_EQ(Read("/sdz/queue/read_ahead_kb"), "128");
  auto missing = DeviceTuning::ApplyToDevice(makedev(8, 32), "/dev/disk/by-id/gone",
                                             {{"read_ahead_kb", "1024"}}, dir() + "/dev-block");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("/dev/disk/by-id/gone (8:32): no " + dir() + "/dev-block/8:32"));
}

}  // namespace
}  // namespace stormark::agent
