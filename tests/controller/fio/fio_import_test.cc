#include "controller/fio/fio_import.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "common/workloads/randio/randio_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller::fio {
namespace {

using stormark::v1::RandioSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

JobFileFacts Facts() {
  JobFileFacts facts;
  facts.ncpus = 4;
  facts.mb_memory = 8192;
  return facts;
}

common::StatusOr<FioImport> Import(const std::string& text) {
  auto jobs = ParseJobText(text, "job.fio", Facts());
  if (!jobs.ok()) return jobs.status();
  return ImportJobs(*jobs);
}

std::string ErrorOf(const std::string& text) {
  auto imported = Import(text);
  EXPECT_FALSE(imported.ok());
  return imported.ok() ? "" : std::string(imported.status().message());
}

// A job file in the style of kubestr's and kbench's: one [global], jobs split by stonewall.
TEST(ImportJobs, AKubernetesStyleFileIsOnePhasePerStonewall) {
  auto imported = Import(R"([global]
ioengine=io_uring
direct=1
bs=4k
size=64m
runtime=30
time_based
group_reporting

[read_iops]
rw=randread
iodepth=64

[write_iops]
stonewall
rw=randwrite
iodepth=16
numjobs=2
)");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->phases.size(), 2u);
  const PhasePlan& read = imported->phases[0];
  EXPECT_EQ(read.name, "read_iops");
  EXPECT_EQ(read.target, "");  // No filename=: the host's target.
  const RandioSpec& r = read.spec.randio();
  EXPECT_EQ(r.rw(), RandioSpec::RANDREAD);
  EXPECT_EQ(r.engine(), RandioSpec::IO_URING);
  EXPECT_TRUE(r.direct());
  EXPECT_EQ(r.bs_min(), 4096u);
  EXPECT_EQ(r.bs_max(), 0u);
  EXPECT_EQ(r.iodepth(), 64u);
  EXPECT_EQ(r.size_bytes(), uint64_t{64} << 20);
  EXPECT_EQ(r.runtime_nanos(), int64_t{30} * 1'000'000'000);
  EXPECT_TRUE(r.time_based());
  EXPECT_EQ(r.seed(), kRepeatableSeed);  // fio's randrepeat=1: the same offsets every run.
  const RandioSpec& w = imported->phases[1].spec.randio();
  EXPECT_EQ(imported->phases[1].name, "write_iops");
  EXPECT_EQ(w.rw(), RandioSpec::RANDWRITE);
  EXPECT_EQ(w.iodepth(), 16u);
  EXPECT_EQ(w.numjobs(), 2u);  // fio's two clones, as two threads of one phase.
  EXPECT_THAT(imported->notes,
              ElementsAre(HasSubstr("job.fio:8: group_reporting: ignored: each phase reports")));
}

TEST(ImportJobs, FioDefaultsHoldWhereRandiosDiffer) {
  auto imported = Import("[j]\nsize=1m\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  const RandioSpec& r = imported->phases[0].spec.randio();
  EXPECT_EQ(r.rw(), RandioSpec::READ);  // fio's default, not randio's randread.
  EXPECT_EQ(r.engine(), RandioSpec::PSYNC);
  EXPECT_EQ(r.bs_min(), 4096u);
}

TEST(ImportJobs, IdenticalJobsThatRunTogetherAreThreadsOfOnePhase) {
  auto imported = Import("[global]\nrw=randread\nsize=1m\n[a]\n[b]\n[c]\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->phases.size(), 1u);
  EXPECT_EQ(imported->phases[0].spec.randio().numjobs(), 3u);
}

// kubestr's default file: four unlike jobs and no stonewall, so fio runs them all at once.
TEST(ImportJobs, UnlikeJobsThatRunTogetherAreOneRunGroupPhase) {
  auto imported = Import(R"([global]
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
numjobs=2
)");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->phases.size(), 1u);
  const PhasePlan& phase = imported->phases[0];
  EXPECT_EQ(phase.name, "read_iops..read_bw");
  const RandioSpec& head = phase.spec.randio();
  EXPECT_EQ(head.name(), "read_iops");
  EXPECT_EQ(head.rw(), RandioSpec::RANDREAD);
  EXPECT_EQ(head.iodepth(), 64u);
  ASSERT_EQ(head.group_size(), 2);
  EXPECT_EQ(head.group(0).name(), "write_iops");
  EXPECT_EQ(head.group(0).rw(), RandioSpec::RANDWRITE);
  EXPECT_EQ(head.group(1).name(), "read_bw");
  EXPECT_EQ(head.group(1).bs_min(), 128u << 10);
  EXPECT_EQ(head.group(1).numjobs(), 2u);  // numjobs=2: two clones, one job of two threads
  EXPECT_EQ(head.group(1).group_size(), 0);
  EXPECT_TRUE(common::CheckRandioSpec(head).ok()) << common::CheckRandioSpec(head);
  EXPECT_THAT(phase.Describe(),
              HasSubstr("randio run group of 3 jobs at once: read_iops: randread bs 4 KiB"));
  EXPECT_THAT(phase.Describe(), HasSubstr("; read_bw: randread bs 128 KiB, iodepth 64, 2 jobs"));
}

TEST(ImportJobs, WhatTheJobsOfARunGroupCannotShareIsRefusedNamingTheJob) {
  EXPECT_EQ(ErrorOf("[reader]\nrw=randread\nfilename=a\n[writer]\nrw=randwrite\nfilename=b\n"),
            "job.fio:4: job 'writer' runs on target 'b' at the same time as job 'reader' on 'a': "
            "the jobs of a run group share one target; add stonewall to 'writer' to run it "
            "after 'reader', or run one job alone with --section writer");
  EXPECT_THAT(ErrorOf("[reader]\nrw=randread\n[writer]\nrw=randwrite\ndirect=1\n"),
              HasSubstr("job.fio:1: the jobs from 'reader' on run at the same time (no "
                        "stonewall between them): randio: job 'writer': the jobs of a run group "
                        "share one open device"));
  EXPECT_THAT(ErrorOf("[reader]\nrw=randread\n[trimmer]\nrw=trim\n"),
              HasSubstr("job.fio:3: job 'trimmer' runs at the same time as job 'reader' (no "
                        "stonewall between them): a trim job runs alone"));
  EXPECT_THAT(ErrorOf("[a]\nrw=randread\nruntime=5\n[b]\nrw=randwrite\nramp_time=1\n"),
              HasSubstr("startdelay + ramp_time differs"));
}

// Verify in a run group (issue 20): each job keeps its own verify setting, as in fio.
TEST(ImportJobs, EachJobOfARunGroupKeepsItsOwnVerify) {
  auto imported = Import(R"([global]
size=8m
bs=4k
[writer]
rw=randwrite
verify=crc32c
[reader]
rw=randread
[checker]
rw=read
offset=8m
verify=md5
)");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->phases.size(), 1u);
  const RandioSpec& head = imported->phases[0].spec.randio();
  ASSERT_EQ(head.group_size(), 2);
  EXPECT_TRUE(head.verify());
  EXPECT_FALSE(head.group(0).verify());
  EXPECT_TRUE(head.group(1).verify());
  EXPECT_TRUE(common::CheckRandioSpec(head).ok()) << common::CheckRandioSpec(head);
}

// A verifying job and one that writes the same bytes at the same time: one line at the verify
// option, naming both jobs, the bytes, and the way out.
TEST(ImportJobs, VerifyOverBytesAnotherJobWritesIsRefusedAtTheVerifyOption) {
  EXPECT_EQ(ErrorOf("[global]\nsize=8m\n[check]\nrw=randread\nverify=crc32c\n"
                    "[scribble]\nrw=randwrite\noffset=4m\n"),
            "job.fio:5: verify=crc32c: job 'check' verifies bytes 4M-8M, which job 'scribble' "
            "writes at the same time: its verify would check data another job overwrote; give "
            "the jobs regions apart (offset, size, offset_increment); add stonewall to "
            "'scribble' to run it after 'check', or run one job alone with --section scribble");
  // In [global], the verify line is the global's; the writer may come first in the file.
  EXPECT_THAT(ErrorOf("[global]\nsize=8m\nverify=crc32c\n[w]\nrw=write\nverify=0\n"
                      "[r]\nrw=read\n"),
              HasSubstr("job.fio:3: verify=crc32c: job 'r' verifies bytes 0-8M, which job 'w' "
                        "writes at the same time"));
  EXPECT_THAT(ErrorOf("[global]\nsize=8m\nverify=crc32c\n[w]\nrw=write\nverify=0\n"
                      "[r]\nrw=read\n"),
              HasSubstr("add stonewall to 'r' to run it after 'w'"));
  // Apart, or with a stonewall between, the same jobs run.
  EXPECT_TRUE(Import("[global]\nsize=4m\n[check]\nrw=randread\nverify=crc32c\n"
                     "[scribble]\nrw=randwrite\noffset=4m\n")
                  .ok());
  EXPECT_TRUE(Import("[global]\nsize=8m\n[check]\nrw=randread\nverify=crc32c\n"
                     "[scribble]\nstonewall\nrw=randwrite\n")
                  .ok());
}

// --set and sweeps reach every job of a run group.
TEST(ImportJobs, PlanSettingsReachEveryJobOfARunGroup) {
  auto imported = Import("[a]\nrw=randread\n[b]\nrw=randwrite\nbs=64k\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  stormark::v1::PhaseSpec spec = imported->phases[0].spec;
  ASSERT_TRUE(SetPhaseParameter("iodepth", "8", &spec).ok());
  EXPECT_EQ(spec.randio().iodepth(), 8u);
  EXPECT_EQ(spec.randio().group(0).iodepth(), 8u);
  EXPECT_EQ(spec.randio().group(0).bs_min(), 65536u);
}

TEST(ImportJobs, IntervalLogsAreAskedForPerJob) {
  auto imported = Import(R"([global]
log_avg_msec=500
log_unix_epoch=1
[reader]
rw=randread
write_bw_log
write_lat_log=lat
[writer]
rw=randwrite
numjobs=2
write_iops_log=w
)");
  ASSERT_TRUE(imported.ok()) << imported.status();
  const PhasePlan& phase = imported->phases[0];
  EXPECT_EQ(phase.spec.series_interval_ms(), 500u);
  ASSERT_EQ(phase.fio_logs.size(), 2u);
  EXPECT_EQ(phase.fio_logs[0].job, "reader");
  EXPECT_EQ(phase.fio_logs[0].bw, "reader");  // fio's default: the job's name
  EXPECT_EQ(phase.fio_logs[0].lat, "lat");
  EXPECT_EQ(phase.fio_logs[0].iops, "");
  EXPECT_EQ(phase.fio_logs[0].thread_number, 1);
  EXPECT_TRUE(phase.fio_logs[0].unix_epoch);
  EXPECT_EQ(phase.fio_logs[1].iops, "w");
  EXPECT_EQ(phase.fio_logs[1].thread_number, 2);
  // The writer's two clones log to w_iops.2.log and w_iops.3.log, each from its own thread.
  EXPECT_EQ(phase.fio_logs[0].clones, 1);
  EXPECT_EQ(phase.fio_logs[1].clones, 2);
  EXPECT_TRUE(phase.fio_logs[1].per_job);
  EXPECT_TRUE(phase.spec.randio().thread_series());
  auto shared = Import("[a]\nnumjobs=3\nwrite_bw_log=x\nper_job_logs=0\n");
  ASSERT_TRUE(shared.ok()) << shared.status();
  ASSERT_EQ(shared->phases[0].fio_logs.size(), 1u);
  EXPECT_EQ(shared->phases[0].fio_logs[0].clones, 3);
  EXPECT_FALSE(shared->phases[0].fio_logs[0].per_job);
  EXPECT_TRUE(shared->phases[0].spec.randio().thread_series());
  // Clones without logs need no thread's figures.
  auto unlogged = Import("[a]\nnumjobs=3\n");
  ASSERT_TRUE(unlogged.ok()) << unlogged.status();
  EXPECT_FALSE(unlogged->phases[0].spec.randio().thread_series());
  EXPECT_THAT(ErrorOf("[a]\nwrite_bw_log=x\nlog_avg_msec=10\n"),
              HasSubstr("log_avg_msec=10: stormark's log interval is from 100 ms"));
  auto every_io = Import("[a]\nwrite_bw_log=x\n");
  ASSERT_TRUE(every_io.ok());
  EXPECT_EQ(every_io->phases[0].spec.series_interval_ms(), 0u);
}

// A run group where only a later job asks for a log: every job keeps its place in fio_logs,
// so that the log is made from the job that asked for it, not from the group's first job.
TEST(ImportJobs, ALogAskedForByALaterJobOfARunGroupKeepsItsPlace) {
  auto imported = Import("[reader]\nrw=randread\n[writer]\nrw=randwrite\nwrite_bw_log=w\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  const PhasePlan& phase = imported->phases[0];
  ASSERT_EQ(phase.fio_logs.size(), 2u);
  EXPECT_EQ(phase.fio_logs[0].job, "reader");
  EXPECT_EQ(phase.fio_logs[0].bw, "");
  EXPECT_EQ(phase.fio_logs[1].job, "writer");
  EXPECT_EQ(phase.fio_logs[1].bw, "w");
  EXPECT_EQ(phase.fio_logs[1].thread_number, 2);
  auto none = Import("[reader]\nrw=randread\n[writer]\nrw=randwrite\n");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->phases[0].fio_logs.empty());
}

TEST(ImportJobs, TrimwriteWritesEachBlockAfterItsDiscard) {
  auto imported = Import("[a]\nrw=trimwrite\nbs=64k\nsize=1m\n[b]\nstonewall\nrw=randtrimwrite\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->phases.size(), 2u);
  EXPECT_TRUE(imported->phases[0].spec.trim().then_write());
  EXPECT_FALSE(imported->phases[0].spec.trim().random());
  EXPECT_TRUE(imported->phases[1].spec.trim().then_write());
  EXPECT_TRUE(imported->phases[1].spec.trim().random());
}

TEST(ImportJobs, WaitForIsAPhaseBoundary) {
  auto imported = Import("[a]\nrw=read\n[b]\nwait_for=a\nrw=write\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->phases.size(), 2u);
  EXPECT_EQ(imported->phases[1].spec.randio().rw(), RandioSpec::WRITE);
}

TEST(ImportJobs, FilenameNamesATargetAndNeverAPath) {
  auto imported = Import("[j]\nfilename=disk1\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->phases[0].target, "disk1");
  EXPECT_EQ(ErrorOf("[j]\nfilename=/dev/sdb\n"),
            "job.fio:2: filename=/dev/sdb: stormark reaches storage only through the agent's "
            "targets, never a path: define one in the agent's config (targets: {data: {block: "
            "/dev/sdb}} or {data: {dir: DIR}}) and write filename=data");
  EXPECT_THAT(ErrorOf("[j]\nfilename=a:b\n"), HasSubstr("several files per job"));
}

TEST(ImportJobs, RefusedAndUnknownOptionsNameTheLineAndWhy) {
  EXPECT_EQ(ErrorOf("[global]\nsize=1m\n[j]\nzonemode=zbd\n"),
            "job.fio:4: zonemode=zbd: not supported: zoned block devices are not supported");
  EXPECT_EQ(ErrorOf("[j]\nfrobnicate=1\n"), "job.fio:2: frobnicate=1: not an option of fio 3.33");
  EXPECT_THAT(ErrorOf("[j]\nioengine=mmap\n"),
              HasSubstr("stormark runs psync (sync, pvsync), io_uring and libaio"));
  EXPECT_THAT(ErrorOf("[j]\nverify=adler\n"),
              HasSubstr("job.fio:2: verify=adler: not a verify method fio knows"));
  EXPECT_THAT(ErrorOf("[j]\nstartdelay=1-5\n"), HasSubstr("a random start delay"));
  EXPECT_THAT(ErrorOf("[j]\nbssplit=4k/50:64k/50,,8k/100\n"), HasSubstr("a split for trims"));
  EXPECT_THAT(
      ErrorOf("[j]\nrw=trim\ntime_based\nruntime=10\n"),
      HasSubstr("job.fio:2: rw=trim: with time_based: a trim job discards its region once"));
  EXPECT_THAT(ErrorOf("[j]\nrw=randtrim\nnumjobs=2\n"), HasSubstr("runs in one thread"));
  EXPECT_THAT(ErrorOf("[j]\nrw=read:4k\n"), HasSubstr("after ':' is not supported yet"));
  EXPECT_THAT(ErrorOf("[j]\nexec_prerun=mkfs.xfs /dev/sdb\n"), HasSubstr("setup: hooks"));
}

TEST(ImportJobs, ValuesForReadsAndWritesApart) {
  EXPECT_THAT(ErrorOf("[j]\nrate_iops=100,200\n"),
              HasSubstr("job.fio:2: rate_iops=100,200: different values for reads, writes and "
                        "trims"));
  // bs=READS,WRITES is a split of one size each way.
  auto apart = Import("[j]\nrw=randrw\nbs=4k,64k\n");
  ASSERT_TRUE(apart.ok()) << apart.status();
  const RandioSpec& r = apart->phases[0].spec.randio();
  ASSERT_EQ(r.bssplit_size(), 1);
  EXPECT_EQ(r.bssplit(0).bs(), 4096u);
  ASSERT_EQ(r.write_bssplit_size(), 1);
  EXPECT_EQ(r.write_bssplit(0).bs(), 65536u);
  EXPECT_EQ(r.bs_min(), 4096u);
  EXPECT_EQ(r.bs_max(), 65536u);
  EXPECT_THAT(ErrorOf("[j]\nbs=4k,8k,16k\n"), HasSubstr("a size for trims is not supported"));
  auto same = Import("[j]\nbs=8k,8k\n");
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->phases[0].spec.randio().bs_min(), 8192u);
  auto range = Import("[j]\nbsrange=4k-64k\n");
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->phases[0].spec.randio().bs_min(), 4096u);
  EXPECT_EQ(range->phases[0].spec.randio().bs_max(), 65536u);
}

TEST(ImportJobs, FiosUnitsAreRead) {
  auto imported =
      Import("[j]\nkb_base=1000\nsize=2m\nruntime=1m\nramp_time=500ms\nrate=1k\niodepth=1k\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->phases[0].spec.randio().iodepth(), 1000u);  // Counts take units too.
  imported = Import("[j]\nkb_base=1000\nsize=2m\nruntime=1m\nramp_time=500ms\nrate=1k\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  const RandioSpec& r = imported->phases[0].spec.randio();
  EXPECT_EQ(r.size_bytes(), 2'000'000u);  // kb_base=1000
  EXPECT_EQ(r.runtime_nanos(), int64_t{60} * 1'000'000'000);
  EXPECT_EQ(r.ramp_time_nanos(), int64_t{500} * 1'000'000);
  EXPECT_EQ(r.rate_bytes(), 1000u);
  EXPECT_THAT(ErrorOf("[j]\niodepth=8k\n"), HasSubstr("job.fio:2: iodepth=8k: "));  // 8192
  // A share of the device goes to the agent, which knows its size.
  auto half = Import("[j]\nsize=50%\noffset=25%\n");
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->phases[0].spec.randio().size_percent(), 50u);
  EXPECT_EQ(half->phases[0].spec.randio().offset_percent(), 25u);
  EXPECT_THAT(ErrorOf("[j]\nbs=50%\n"), HasSubstr("job.fio:2: bs=50%: "));
}

// The options of kubestr's, kbench's and dbench's job files, and fio's examples/.
TEST(ImportJobs, LibaioAndFiosPacingOptionsAreMapped) {
  auto imported = Import(R"([global]
ioengine=libaio
direct=1
iodepth=64
iodepth_batch_submit=16
iodepth_batch_complete_min=8
iodepth_batch_complete_max=32
iodepth_low=48
norandommap
random_generator=tausworthe64
bssplit=4k/20:64k/80
ba=4k
startdelay=2
end_fsync=1
thinktime=2000
thinktime_spin=500
thinktime_blocks=4
rate_iops=500
rate_process=poisson
verify=md5
size=40%

[j]
rw=randrw
)");
  ASSERT_TRUE(imported.ok()) << imported.status();
  const RandioSpec& r = imported->phases[0].spec.randio();
  EXPECT_EQ(r.engine(), RandioSpec::LIBAIO);
  EXPECT_EQ(r.iodepth_batch_submit(), 16u);
  EXPECT_EQ(r.iodepth_batch_complete_min(), 8u);
  EXPECT_EQ(r.iodepth_batch_complete_max(), 32u);
  EXPECT_EQ(r.iodepth_low(), 48u);
  EXPECT_TRUE(r.norandommap());
  ASSERT_EQ(r.bssplit_size(), 2);
  EXPECT_EQ(r.bssplit(1).bs(), 65536u);
  EXPECT_EQ(r.bssplit(1).percent(), 80u);
  EXPECT_EQ(r.blockalign(), 4096u);
  EXPECT_EQ(r.startdelay_nanos(), 2'000'000'000);  // fio's seconds
  EXPECT_TRUE(r.end_fsync());
  EXPECT_EQ(r.thinktime_nanos(), 2'000'000);  // fio's microseconds
  EXPECT_EQ(r.thinktime_spin_nanos(), 500'000);
  EXPECT_EQ(r.thinktime_blocks(), 4u);
  EXPECT_TRUE(r.rate_poisson());
  EXPECT_TRUE(r.verify());
  EXPECT_EQ(r.size_percent(), 40u);
  EXPECT_TRUE(common::CheckRandioSpec(r).ok()) << common::CheckRandioSpec(r);
  EXPECT_THAT(imported->notes,
              testing::Contains(HasSubstr("random_generator: ignored: stormark draws offsets")));
  EXPECT_THAT(imported->notes,
              testing::Contains(HasSubstr("verify=md5: checked by stormark's own verify")));
}

// fio's trim and randtrim run as stormark's trim workload: each block of the region once.
TEST(ImportJobs, TrimJobsRunAsTheTrimWorkload) {
  auto imported = Import(R"([global]
ioengine=libaio
iodepth=8
size=16m
offset=1m
[seq]
rw=trim
bs=1m
[random]
stonewall
rw=randtrim
bs=64k
)");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->phases.size(), 2u);
  const stormark::v1::TrimSpec& seq = imported->phases[0].spec.trim();
  EXPECT_TRUE(imported->phases[0].spec.has_trim());
  EXPECT_EQ(seq.size_bytes(), 16u << 20);
  EXPECT_EQ(seq.bs(), 1u << 20);
  EXPECT_EQ(seq.offset_bytes(), 1u << 20);
  EXPECT_FALSE(seq.random());
  const stormark::v1::TrimSpec& random = imported->phases[1].spec.trim();
  EXPECT_TRUE(random.random());
  EXPECT_EQ(random.bs(), 65536u);
  EXPECT_EQ(random.seed(), kRepeatableSeed);  // randrepeat=1, fio's default
  EXPECT_THAT(imported->notes, testing::Contains(HasSubstr("discards go one at a time")));
}

TEST(ImportJobs, LibaioWithoutDirectIsWarnedAbout) {
  auto imported = Import("[j]\nioengine=libaio\niodepth=32\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(imported->warnings,
              testing::Contains(HasSubstr(
                  "job.fio:1: job 'j': ioengine=libaio without direct=1: the kernel runs "
                  "buffered AIO inside io_submit, one request at a time, so iodepth=32 acts as "
                  "1, as in fio: add direct=1")));
  auto direct = Import("[j]\nioengine=libaio\niodepth=32\ndirect=1\n");
  ASSERT_TRUE(direct.ok());
  EXPECT_TRUE(direct->warnings.empty());
}

TEST(ImportJobs, RandrepeatAndRandseed) {
  auto seeded = Import("[j]\nrandseed=7\n");
  ASSERT_TRUE(seeded.ok()) << seeded.status();
  EXPECT_EQ(seeded->phases[0].spec.randio().seed(), 7u);
  auto fresh = Import("[j]\nrandrepeat=0\n");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(fresh->phases[0].spec.randio().seed(), 0u);  // The agent picks one per run.
}

TEST(ImportJobs, BufferedAndVerify) {
  auto imported = Import("[j]\nbuffered=0\nverify=crc32c\nrw=randwrite\nsize=1m\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_TRUE(imported->phases[0].spec.randio().direct());
  EXPECT_TRUE(imported->phases[0].spec.randio().verify());
}

TEST(ImportJobs, PhaseNamesAreValidAndDistinct) {
  auto imported = Import("[my job]\nrw=read\n[my job]\nstonewall\nrw=write\n");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->phases.size(), 2u);
  EXPECT_EQ(imported->phases[0].name, "my-job");
  EXPECT_EQ(imported->phases[1].name, "my-job-2");
}

TEST(ImportJobs, AFileWithOnlyGlobalsHoldsNoJob) {
  EXPECT_EQ(ErrorOf("[global]\nrw=read\n"),
            "job.fio: no jobs: fio needs a section other than [global]");
  EXPECT_EQ(ImportJobs({}).status().message(), "the job file holds no job");
}

TEST(ImportJobFile, AJobThatDependsOnTheMachineSaysWhoseFactsItGot) {
  const std::string dir = ::testing::TempDir();
  const std::string machine = dir + "/machine.fio", plain = dir + "/plain.fio";
  { std::ofstream(machine) << "[j]\nnumjobs=$ncpus\nsize=1m\n"; }
  { std::ofstream(plain) << "[j]\nnumjobs=2\nsize=1m\n"; }
  auto imported = ImportJobFile(machine, {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(imported->warnings,
              ElementsAre(HasSubstr(machine + ": its jobs depend on $ncpus, $mb_memory or "
                                              "$pagesize, which stormark takes from this "
                                              "controller (")));
  imported = ImportJobFile(plain, {});
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_THAT(imported->warnings, ::testing::IsEmpty());
  std::remove(machine.c_str());
  std::remove(plain.c_str());
}

}  // namespace
}  // namespace stormark::controller::fio
