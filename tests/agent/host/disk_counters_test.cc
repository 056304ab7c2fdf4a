#include "agent/host/disk_counters.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1 << 20;

class DiskCountersTest : public TempDirTest {
 protected:
  // A /sys/class/block with disk `name` whose stat file says `line`.
  std::string FakeSys(const std::string& name, const std::string& line) const {
    const std::string root = dir() + "/class-block";
    mkdir(root.c_str(), 0755);
    mkdir((root + "/" + name).c_str(), 0755);
    std::ofstream(root + "/" + name + "/stat") << line;
    return root;
  }
};

TEST_F(DiskCountersTest, ReadsTheKernelsStatFileInSectors) {
  const std::string root = FakeSys(
      "vda", "    1200      30   204800    500     300    10   8192  90 0 100 600 4 0 8 2\n");
  const auto counters = ReadDiskCounters(root, "vda");
  ASSERT_TRUE(counters.has_value());
  EXPECT_EQ(counters->reads, 1200u);
  EXPECT_EQ(counters->read_bytes, 204800u * 512);
  EXPECT_EQ(counters->writes, 300u);
  EXPECT_EQ(counters->written_bytes, 8192u * 512);
  EXPECT_FALSE(ReadDiskCounters(root, "sdz").has_value());
  EXPECT_FALSE(ReadDiskCounters(root, "../class-block/vda").has_value());  // Not a plain name.
  EXPECT_FALSE(ReadDiskCounters(root, "..").has_value());
  // The kernel's own names with '!' for '/': the AoE driver's /dev/etherd/e1.0.
  const std::string aoe = FakeSys("etherd!e1.0", "10 0 160 0 2 0 16 0 0 0 0 0 0 0 0\n");
  ASSERT_TRUE(ReadDiskCounters(aoe, "etherd!e1.0").has_value());
  EXPECT_EQ(ReadDiskCounters(aoe, "etherd!e1.0")->read_bytes, 160u * 512);
  const std::string short_line = FakeSys("sdb", "1 2 3\n");
  EXPECT_FALSE(ReadDiskCounters(short_line, "sdb").has_value());
}

stormark::v1::PhaseSpec StreamRead() {
  stormark::v1::PhaseSpec spec;
  spec.mutable_stream()->set_direction(stormark::v1::StreamSpec::READ);
  return spec;
}

TEST(DiskFigures, ReadsThatDidNotReachTheDiskAreSaidToBeCache) {
  stormark::v1::PhaseResult result;
  result.set_bytes(256 * kMiB);
  const DiskCounters before{100, 10 * kMiB, 5, kMiB};
  const DiskCounters after{120, 12 * kMiB, 5, kMiB};  // 2 MiB of 256 reached it
  AddDiskFigures("vda", before, after, StreamRead(), &result);
  EXPECT_EQ(result.device_stats().at("disk"), "vda");
  EXPECT_EQ(result.device_stats().at("disk.read_bytes"), std::to_string(2 * kMiB));
  EXPECT_EQ(result.device_stats().at("disk.reads"), "20");
  ASSERT_EQ(result.warnings_size(), 1);
  EXPECT_THAT(result.warnings(0), HasSubstr("possibly cache-dominated: the workload read "
                                            "256 MiB, but 2 MiB reached vda"));
}

TEST(DiskFigures, ReadsThatReachedTheDiskAndSmallOrWritePhasesCarryNoNote) {
  const DiskCounters before;
  stormark::v1::PhaseResult reached;
  reached.set_bytes(256 * kMiB);
  AddDiskFigures("vda", before, DiskCounters{2048, 256 * kMiB, 0, 0}, StreamRead(), &reached);
  EXPECT_EQ(reached.warnings_size(), 0);
  stormark::v1::PhaseResult small;  // Too little read to judge.
  small.set_bytes(8 * kMiB);
  AddDiskFigures("vda", before, before, StreamRead(), &small);
  EXPECT_EQ(small.warnings_size(), 0);
  stormark::v1::PhaseSpec write;
  write.mutable_stream()->set_direction(stormark::v1::StreamSpec::WRITE);
  stormark::v1::PhaseResult written;
  written.set_bytes(256 * kMiB);
  AddDiskFigures("vda", before, before, write, &written);
  EXPECT_EQ(written.warnings_size(), 0);
}

TEST(DiskFigures, RandioAndBonnieReadsAreTheirReadMeasurements) {
  stormark::v1::PhaseSpec randio;
  randio.mutable_randio();
  stormark::v1::PhaseResult r;
  auto* read = r.add_measurements();
  read->set_name("read");
  read->set_bytes(100);
  auto* write = r.add_measurements();
  write->set_name("write");
  write->set_bytes(1000);
  EXPECT_EQ(WorkloadReadBytes(randio, r), 100u);
  stormark::v1::PhaseSpec bonnie;
  bonnie.mutable_bonnie();
  stormark::v1::PhaseResult b;
  for (const auto& [name, bytes] : {std::pair{"put_block", 7}, std::pair{"get_block", 30},
                                    std::pair{"getc", 5}, std::pair{"rewrite", 9}}) {
    auto* m = b.add_measurements();
    m->set_name(name);
    m->set_bytes(bytes);
  }
  EXPECT_EQ(WorkloadReadBytes(bonnie, b), 35u);
}

}  // namespace
}  // namespace stormark::agent
