// The reader on real job files: fio's own examples (fio's repository, examples/, at commit
// f5344384), copied verbatim, and kubestr's default job (kastenhq/kubestr,
// pkg/fio/fio_jobs.go). The groups asserted here are the ones fio 3.42 prints as "(g=N)" for
// the same files with ioengine=null.
#include <string>
#include <tuple>
#include <vector>

#include "controller/fio/job_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller::fio {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// fio/examples/fio-rand-read.fio, verbatim.
constexpr std::string_view kFioRandRead = R"fio(; fio-rand-read.job for fiotest

[global]
name=fio-rand-read
filename=fio-rand-read
rw=randread
bs=4K
direct=0
numjobs=1
time_based
runtime=900

[file1]
size=10G
ioengine=libaio
iodepth=16
)fio";

// fio/examples/ssd-test.fio, verbatim.
constexpr std::string_view kSsdTest =
    R"fio(# Do some important numbers on SSD drives, to gauge what kind of
# performance you might get out of them.
#
# Sequential read and write speeds are tested, these are expected to be
# high. Random reads should also be fast, random writes are where crap
# drives are usually separated from the good drives.
#
# This uses a queue depth of 4. New SATA SSD's will support up to 32
# in flight commands, so it may also be interesting to increase the queue
# depth and compare. Note that most real-life usage will not see that
# large of a queue depth, so 4 is more representative of normal use.
#
[global]
bs=4k
ioengine=libaio
iodepth=4
size=10g
direct=1
runtime=60
directory=/mount-point-of-ssd
filename=ssd.test.file

[seq-read]
rw=read
stonewall

[rand-read]
rw=randread
stonewall

[seq-write]
rw=write
stonewall

[rand-write]
rw=randwrite
stonewall
)fio";

// fio/examples/surface-scan.fio, verbatim.
constexpr std::string_view kSurfaceScan =
    R"fio(; writes 512 byte verification blocks until the disk is full,
; then verifies written data
[global]
thread
bs=64k
direct=1
ioengine=sync
verify=meta
verify_pattern=0xaa555aa5
verify_interval=512

[write-phase]
filename=datafile.tmp	; or use a full disk, for example /dev/sda
rw=write
fill_device=1
do_verify=0

[verify-phase]
stonewall
create_serialize=0
filename=datafile.tmp
rw=read
do_verify=1
)fio";

// fio/examples/waitfor.fio, verbatim.
constexpr std::string_view kWaitfor = R"fio([global]
threads=1
group_reporting
filename=/tmp/data
filesize=128m

[writers]
rw=write
bs=128k
numjobs=4
runtime=10

[readers]
new_group
wait_for=writers
rw=randread
bs=4k
numjobs=4
runtime=10

[writers2]
new_group
wait_for=readers
rw=randwrite
bs=4k
numjobs=4
runtime=10

[readers2]
new_group
wait_for=writers2
rw=randread
bs=4k
numjobs=4
runtime=10
)fio";

// fio/examples/tiobench-example.fio, verbatim.
constexpr std::string_view kTiobenchExample =
    R"fio(; tiobench like setup, add more fX files between the stonewalls to
; create more threads

[global]
direct=1
size=512m
bsrange=4k-4k
timeout=60
numjobs=4	; 4 simultaneous threads for each job

[f1]
rw=write

[f2]
stonewall
rw=randwrite

[f3]
stonewall
rw=read

[f4]
stonewall
rw=randread
)fio";

// fio/examples/exitwhat.fio, verbatim.
constexpr std::string_view kExitwhat =
    R"fio(# We want to run fast1 as long as slow1 is running, but also have a cumulative
# report of fast1 (group_reporting=1/new_group=1).  exitall=1 would not cause
# fast1 to stop after slow1 is done. Setting exit_what=stonewall will cause
# alls jobs up until the next stonewall setting to be stopped, when job slow1
# finishes.
# In this example skipping forward to slow2/fast2. slow2 has exit_what=all set,
# which means all jobs will be cancelled when slow2 finishes. In particular,
# runsnever will never run.

[global]
filename=/tmp/test
filesize=1G
blocksize=4096
group_reporting
exitall=1

[slow1]
rw=read
numjobs=1
ioengine=sync
new_group=1
thinktime=2000
number_ios=1000
exit_what=stonewall

[fast1]
new_group=1
rw=randrw
numjobs=3
ioengine=libaio
iodepth=32
rate=300,300,300

[slow2]
stonewall
rw=write
numjobs=1
ioengine=sync
new_group=1
thinktime=2000
number_ios=1000
exit_what=all

[fast2]
rw=randrw
numjobs=3
ioengine=libaio
iodepth=32
rate=300,300,300

[runsnever]
rw=randrw
numjobs=3
ioengine=libaio
iodepth=32
rate=300,300,300
)fio";

// kubestr's DefaultFIOJob (testJob1), verbatim: four jobs and no stonewall.
constexpr std::string_view kKubestr = R"fio([global]
randrepeat=0
verify=0
ioengine=libaio
direct=1
gtod_reduce=1
[job1]
name=read_iops
bs=4K
iodepth=64
size=2G
readwrite=randread
time_based
ramp_time=2s
runtime=15s
[job2]
name=write_iops
bs=4K
iodepth=64
size=2G
readwrite=randwrite
time_based
ramp_time=2s
runtime=15s
[job3]
name=read_bw
bs=128K
iodepth=64
size=2G
readwrite=randread
time_based
ramp_time=2s
runtime=15s
[job4]
name=write_bw
bs=128k
iodepth=64
size=2G
readwrite=randwrite
time_based
ramp_time=2s
runtime=15s
)fio";

JobFileFacts Facts() {
  JobFileFacts facts;
  facts.ncpus = 4;
  facts.mb_memory = 16384;
  return facts;
}

std::vector<FioJob> Read(std::string_view text, const ReadOptions& options = {}) {
  auto jobs = ParseJobText(text, "job.fio", Facts(), options);
  EXPECT_TRUE(jobs.ok()) << jobs.status();
  return jobs.ok() ? *jobs : std::vector<FioJob>{};
}

// "name=value", or "name" for a flag, in order.
std::vector<std::string> Options(const FioJob& job) {
  std::vector<std::string> out;
  for (const JobOption& option : job.options) {
    out.push_back(option.has_value ? option.name + "=" + option.value : option.name);
  }
  return out;
}

// Each job's name, clone, run_group and reporting_group.
using Place = std::tuple<std::string, int, int, int>;
std::vector<Place> Places(const std::vector<FioJob>& jobs) {
  std::vector<Place> out;
  for (const FioJob& job : jobs) {
    out.emplace_back(job.name, job.clone, job.run_group, job.reporting_group);
  }
  return out;
}

// `count` clones of `name` in the given groups.
void AddClones(std::vector<Place>* places, const std::string& name, int count, int run,
               int reporting) {
  for (int clone = 0; clone < count; ++clone) places->emplace_back(name, clone, run, reporting);
}

TEST(FioExamples, FioRandReadIsOneJobWithTheGlobalOptionsFirst) {
  const std::vector<FioJob> jobs = Read(kFioRandRead);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].name, "file1");  // the global name= gives way to the section's name
  EXPECT_EQ(jobs[0].section, "file1");
  EXPECT_EQ(jobs[0].file, "job.fio");
  EXPECT_EQ(jobs[0].line, 13);
  EXPECT_THAT(Options(jobs[0]), ElementsAre("filename=fio-rand-read", "rw=randread", "bs=4K",
                                            "direct=0", "numjobs=1", "time_based", "runtime=900",
                                            "size=10G", "ioengine=libaio", "iodepth=16"));
  EXPECT_EQ(jobs[0].options[0].line, 5);
  EXPECT_EQ(jobs[0].options[7].line, 14);
  EXPECT_FALSE(jobs[0].options[5].has_value);
  EXPECT_THAT(Places(jobs), ElementsAre(Place{"file1", 0, 0, 0}));
  EXPECT_TRUE(LooksLikeJobFile(kFioRandRead));
}

TEST(FioExamples, SsdTestRunsEachJobAfterThePrevious) {
  const std::vector<FioJob> jobs = Read(kSsdTest);
  EXPECT_THAT(Places(jobs), ElementsAre(Place{"seq-read", 0, 0, 0}, Place{"rand-read", 0, 1, 1},
                                        Place{"seq-write", 0, 2, 2}, Place{"rand-write", 0, 3, 3}));
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_THAT(Options(jobs[1]),
              ElementsAre("bs=4k", "ioengine=libaio", "iodepth=4", "size=10g", "direct=1",
                          "runtime=60", "directory=/mount-point-of-ssd", "filename=ssd.test.file",
                          "rw=randread", "stonewall"));
}

TEST(FioExamples, SurfaceScanDropsTheTrailingComment) {
  const std::vector<FioJob> jobs = Read(kSurfaceScan);
  EXPECT_THAT(Places(jobs),
              ElementsAre(Place{"write-phase", 0, 0, 0}, Place{"verify-phase", 0, 1, 1}));
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_THAT(Options(jobs[0]),
              ElementsAre("thread", "bs=64k", "direct=1", "ioengine=sync", "verify=meta",
                          "verify_pattern=0xaa555aa5", "verify_interval=512",
                          "filename=datafile.tmp", "rw=write", "fill_device=1", "do_verify=0"));
}

TEST(FioExamples, WaitForStartsReportingGroupsThatDoNotWaitForEachOther) {
  const std::vector<FioJob> jobs = Read(kWaitfor);
  std::vector<Place> expected;
  AddClones(&expected, "writers", 4, 0, 0);
  AddClones(&expected, "readers", 4, 0, 1);
  AddClones(&expected, "writers2", 4, 0, 2);
  AddClones(&expected, "readers2", 4, 0, 3);
  EXPECT_THAT(Places(jobs), ElementsAreArray(expected));
  ASSERT_EQ(jobs.size(), 16u);
  EXPECT_EQ(jobs[0].wait_for, "");
  EXPECT_EQ(jobs[4].wait_for, "writers");
  EXPECT_EQ(jobs[7].wait_for, "writers");
  EXPECT_EQ(jobs[8].wait_for, "readers");
  EXPECT_EQ(jobs[12].wait_for, "writers2");
}

TEST(FioExamples, TiobenchClonesEachJobFourTimes) {
  const std::vector<FioJob> jobs = Read(kTiobenchExample);
  std::vector<Place> expected;
  AddClones(&expected, "f1", 4, 0, 0);
  AddClones(&expected, "f2", 4, 1, 1);
  AddClones(&expected, "f3", 4, 2, 2);
  AddClones(&expected, "f4", 4, 3, 3);
  EXPECT_THAT(Places(jobs), ElementsAreArray(expected));
  ASSERT_EQ(jobs.size(), 16u);
  EXPECT_THAT(Options(jobs[3]), ElementsAre("direct=1", "size=512m", "bsrange=4k-4k", "timeout=60",
                                            "numjobs=4", "rw=write"));
}

TEST(FioExamples, ExitWhatSeparatesReportingGroupsFromRunGroups) {
  const std::vector<FioJob> jobs = Read(kExitwhat);
  std::vector<Place> expected;
  AddClones(&expected, "slow1", 1, 0, 0);
  AddClones(&expected, "fast1", 3, 0, 1);
  AddClones(&expected, "slow2", 1, 1, 2);
  AddClones(&expected, "fast2", 3, 1, 2);
  AddClones(&expected, "runsnever", 3, 1, 2);
  EXPECT_THAT(Places(jobs), ElementsAreArray(expected));
}

TEST(Kubestr, TheDefaultJobRunsAllFourJobsAtOnce) {
  const std::vector<FioJob> jobs = Read(kKubestr);
  EXPECT_THAT(Places(jobs), ElementsAre(Place{"read_iops", 0, 0, 0}, Place{"write_iops", 0, 0, 0},
                                        Place{"read_bw", 0, 0, 0}, Place{"write_bw", 0, 0, 0}));
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].section, "job1");
  EXPECT_THAT(Options(jobs[0]),
              ElementsAre("randrepeat=0", "verify=0", "ioengine=libaio", "direct=1",
                          "gtod_reduce=1", "name=read_iops", "bs=4K", "iodepth=64", "size=2G",
                          "readwrite=randread", "time_based", "ramp_time=2s", "runtime=15s"));
}

constexpr std::string_view kKubestrStonewalled = R"fio([global]
ioengine=libaio
direct=1
gtod_reduce=1
size=2G
iodepth=64
time_based
ramp_time=2s
runtime=15s

[read_iops]
bs=4K
readwrite=randread

[write_iops]
stonewall
bs=4K
readwrite=randwrite

[read_bw]
stonewall
bs=128K
readwrite=randread

[write_bw]
stonewall
bs=128k
readwrite=randwrite
)fio";

TEST(Kubestr, AStonewalledVariantRunsOneJobAtATime) {
  const std::vector<FioJob> jobs = Read(kKubestrStonewalled);
  EXPECT_THAT(Places(jobs), ElementsAre(Place{"read_iops", 0, 0, 0}, Place{"write_iops", 0, 1, 1},
                                        Place{"read_bw", 0, 2, 2}, Place{"write_bw", 0, 3, 3}));
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_THAT(Options(jobs[1]),
              ElementsAre("ioengine=libaio", "direct=1", "gtod_reduce=1", "size=2G", "iodepth=64",
                          "time_based", "ramp_time=2s", "runtime=15s", "stonewall", "bs=4K",
                          "readwrite=randwrite"));
  EXPECT_EQ(jobs[3].line, 25);
}

TEST(Kubestr, OneSectionAloneIsItsOwnFirstGroup) {
  const std::vector<FioJob> jobs = Read(kKubestrStonewalled, {.sections = {"read_bw"}});
  EXPECT_THAT(Places(jobs), ElementsAre(Place{"read_bw", 0, 0, 0}));
}

}  // namespace
}  // namespace stormark::controller::fio
