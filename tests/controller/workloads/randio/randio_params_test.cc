#include "controller/workloads/randio/randio_params.h"

#include <string>

#include "common/spec_check.h"
#include "common/workloads/randio/randio_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using stormark::v1::RandioSpec;
using ::testing::HasSubstr;

// The spec a plan phase starts from: the table's defaults.
RandioSpec Defaults() {
  stormark::v1::PhaseSpec phase;
  RandioOptions().Init(&phase);
  return phase.randio();
}

RandioSpec Parse(std::initializer_list<std::pair<std::string, std::string>> params) {
  RandioSpec spec = Defaults();
  for (const auto& [key, value] : params) {
    const common::Status s = SetRandioParameter(key, value, &spec);
    EXPECT_TRUE(s.ok()) << key << "=" << value << ": " << s;
  }
  return spec;
}

std::string Error(const std::string& key, const std::string& value) {
  RandioSpec spec = Defaults();
  const common::Status s = SetRandioParameter(key, value, &spec);
  EXPECT_FALSE(s.ok()) << key << "=" << value;
  return std::string(s.message());
}

TEST(RandioParams, DefaultsAreFios) {
  const RandioSpec spec = Defaults();
  EXPECT_EQ(spec.rw(), RandioSpec::RANDREAD);
  EXPECT_EQ(spec.bs_min(), 4096u);
  EXPECT_EQ(spec.runtime_nanos(), int64_t{60} * 1'000'000'000);
  EXPECT_TRUE(common::CheckRandioSpec(spec).ok());
}

TEST(RandioParams, ReadsAFioJobLineByLine) {
  const RandioSpec spec = Parse({{"rw", "randrw"},
                                 {"rwmixread", "70"},
                                 {"bs", "4k-64k"},
                                 {"iodepth", "32"},
                                 {"numjobs", "4"},
                                 {"size", "1G"},
                                 {"offset", "1M"},
                                 {"offset_increment", "2G"},
                                 {"runtime", "60s"},
                                 {"time_based", "1"},
                                 {"ramp_time", "5s"},
                                 {"ioengine", "io_uring"},
                                 {"direct", "1"},
                                 {"fdatasync", "8"},
                                 {"rate_iops", "5000"},
                                 {"rate", "100M"},
                                 {"random_distribution", "zipf:1.2"},
                                 {"verify", "crc32c"},
                                 {"randseed", "42"}});
  EXPECT_EQ(spec.rw(), RandioSpec::RANDRW);
  EXPECT_EQ(spec.rwmixread(), 70u);
  EXPECT_EQ(spec.bs_min(), 4096u);
  EXPECT_EQ(spec.bs_max(), 65536u);
  EXPECT_EQ(spec.iodepth(), 32u);
  EXPECT_EQ(spec.numjobs(), 4u);
  EXPECT_EQ(spec.size_bytes(), uint64_t{1} << 30);
  EXPECT_EQ(spec.offset_bytes(), uint64_t{1} << 20);
  EXPECT_EQ(spec.offset_increment_bytes(), uint64_t{2} << 30);
  EXPECT_EQ(spec.runtime_nanos(), int64_t{60} * 1'000'000'000);
  EXPECT_TRUE(spec.time_based());
  EXPECT_EQ(spec.ramp_time_nanos(), int64_t{5} * 1'000'000'000);
  EXPECT_EQ(spec.engine(), RandioSpec::IO_URING);
  EXPECT_TRUE(spec.direct());
  EXPECT_EQ(spec.fdatasync(), 8u);
  EXPECT_EQ(spec.rate_iops(), 5000u);
  EXPECT_EQ(spec.rate_bytes(), uint64_t{100} << 20);
  EXPECT_EQ(spec.random_distribution(), RandioSpec::ZIPF);
  EXPECT_DOUBLE_EQ(spec.zipf_theta(), 1.2);
  EXPECT_TRUE(spec.verify());
  EXPECT_EQ(spec.seed(), 42u);
  EXPECT_TRUE(common::CheckRandioSpec(spec).ok()) << common::CheckRandioSpec(spec);
  EXPECT_EQ(DescribeRandio(spec),
            "randio randrw bs 4 KiB-64 KiB, 70% reads, iodepth 32, 4 jobs, io_uring, direct, "
            "1 GiB at 1 MiB, 60.0 s time_based after 5.00 s ramp, fdatasync every 8, max 5000 "
            "IOPS per job, max 100 MiB/s per job, zipf:1.2, verify");
}

TEST(RandioParams, TitleNamesTheEngineOnlyWhenThePlanChoseIt) {
  // Unset, each target picks its own (an AoE, NBD or iSCSI target runs its initiator's queue),
  // so the phase title must not claim psync for them.
  RandioSpec spec;
  spec.set_rw(RandioSpec::RANDREAD);
  spec.set_bs_min(4096);
  spec.set_iodepth(16);
  EXPECT_EQ(DescribeRandio(spec), "randio randread bs 4 KiB, iodepth 16");
  spec.set_engine(RandioSpec::PSYNC);
  EXPECT_EQ(DescribeRandio(spec), "randio randread bs 4 KiB, iodepth 16, psync");
}

TEST(RandioParams, ErrorsNameTheParameterAndTheChoices) {
  EXPECT_THAT(Error("rw", "random"), HasSubstr("bad rw 'random': use read, write, randread"));
  EXPECT_THAT(Error("bs", "4q"), HasSubstr("bad bs '4q'"));
  EXPECT_THAT(Error("engine", "posixaio"),
              HasSubstr("bad engine 'posixaio': use psync, io_uring or libaio"));
  EXPECT_THAT(Error("size", "120%"), HasSubstr("a percentage must be from 1% to 100%"));
  EXPECT_THAT(Error("bssplit", "4k/50:64k/60"), HasSubstr("the shares add up to 110%, not 100%"));
  EXPECT_THAT(Error("bssplit", "4k/50:64k/40"), HasSubstr("not 100%"));
  EXPECT_THAT(Error("bssplit", "4q/100"), HasSubstr("'4q/100' is not a block size"));
  EXPECT_THAT(Error("bssplit", "4k/100,8k/100,16k/100"), HasSubstr("give one or two splits"));
  EXPECT_THAT(Error("rate_process", "bursty"), HasSubstr("linear or poisson"));
  EXPECT_THAT(Error("iodepth", "deep"), HasSubstr("bad iodepth 'deep': expected a whole number"));
  EXPECT_THAT(Error("rwmixread", "120"), HasSubstr("0 to 100"));
  EXPECT_THAT(Error("bs", "64k-4k"), HasSubstr("the high end is below the low end"));
  EXPECT_THAT(Error("iodepth", "100000"), HasSubstr("from 0 to 4096"));
  EXPECT_THAT(Error("runtime", "soon"), HasSubstr("bad runtime 'soon'"));
  EXPECT_THAT(Error("random_distribution", "pareto:0.9"), HasSubstr("use random or zipf:THETA"));
  EXPECT_THAT(Error("blocksize", "4k"), HasSubstr("unknown randio parameter 'blocksize'"));
}

std::string Check(std::initializer_list<std::pair<std::string, std::string>> params) {
  return std::string(common::CheckRandioSpec(Parse(params)).message());
}

TEST(CheckRandioSpec, RefusesWhatCannotRun) {
  EXPECT_THAT(Check({{"bs", "4k-6k"}}), HasSubstr("must be a multiple of the smallest"));
  EXPECT_THAT(Check({{"size", "10000"}}), HasSubstr("size 10000 is not a multiple of bs 4k"));
  EXPECT_THAT(Check({{"time_based", "true"}, {"runtime", "0"}}),
              HasSubstr("time_based needs a runtime"));
  EXPECT_THAT(Check({{"rw", "randwrite"}, {"fsync", "1"}, {"fdatasync", "1"}}),
              HasSubstr("fsync or fdatasync, not both"));
  EXPECT_THAT(Check({{"fsync", "4"}}), HasSubstr("apply to patterns that write"));
  EXPECT_THAT(Check({{"rwmixread", "50"}}), HasSubstr("rwmixread applies to rw=randrw"));
  EXPECT_THAT(Check({{"rw", "read"}, {"random_distribution", "zipf:1.1"}}),
              HasSubstr("applies to random patterns"));
  EXPECT_THAT(Check({{"random_distribution", "zipf:1"}}), HasSubstr("zipf theta"));
  EXPECT_THAT(Check({{"direct", "true"}, {"bs", "100"}}), HasSubstr("multiples of 512"));
  EXPECT_THAT(Check({{"rw", "randwrite"}, {"verify", "true"}, {"numjobs", "2"}, {"size", "1G"}}),
              HasSubstr("needs a region per job"));
  EXPECT_EQ(Check({{"rw", "randwrite"},
                   {"verify", "true"},
                   {"numjobs", "2"},
                   {"size", "1G"},
                   {"offset_increment", "1G"}}),
            "");
}

// Verify in a run group: refused only where a verifying job and another job that writes
// reach the same bytes, naming both jobs and the bytes; apart, or only reading, they verify.
TEST(CheckRandioSpec, RunGroupVerifyIsRefusedOnlyWhereAnotherJobWritesTheSameBytes) {
  auto group = [](std::initializer_list<std::pair<std::string, std::string>> a,
                  std::initializer_list<std::pair<std::string, std::string>> b) {
    RandioSpec spec = Parse(a);
    spec.set_name("a");
    RandioSpec other = Parse(b);
    other.set_name("b");
    *spec.add_group() = other;
    const common::Status s = common::CheckRandioSpec(spec);
    return s.ok() ? std::string() : std::string(s.message());
  };
  // A verifying writer next to a reader of the same bytes: the reader checks nothing.
  EXPECT_EQ(group({{"rw", "randwrite"}, {"size", "1M"}, {"verify", "true"}},
                  {{"rw", "randread"}, {"size", "1M"}}),
            "");
  // Two verifying readers of the same bytes check the same layout.
  EXPECT_EQ(group({{"rw", "randread"}, {"size", "1M"}, {"verify", "true"}},
                  {{"rw", "read"}, {"size", "1M"}, {"verify", "true"}}),
            "");
  // Writers side by side, each verifying its own region.
  EXPECT_EQ(group({{"rw", "randwrite"}, {"size", "1M"}, {"verify", "true"}},
                  {{"rw", "randrw"}, {"size", "1M"}, {"offset", "1M"}, {"verify", "true"}}),
            "");
  // Another job's writes over the verified bytes: whichever of the two verifies.
  EXPECT_EQ(group({{"rw", "randread"}, {"size", "1M"}, {"verify", "true"}},
                  {{"rw", "write"}, {"size", "1M"}, {"offset", "512k"}}),
            "randio: job 'a' verifies bytes 512k-1M, which job 'b' writes at the same time: "
            "its verify would check data another job overwrote; give the jobs regions apart "
            "(offset, size, offset_increment)");
  EXPECT_THAT(group({{"rw", "randwrite"}, {"size", "1M"}},
                    {{"rw", "randread"}, {"size", "1M"}, {"verify", "true"}}),
              HasSubstr("job 'b' verifies bytes 0-1M, which job 'a' writes"));
  // A verifying reader where a verifying writer writes: the reader's layout is overwritten.
  EXPECT_THAT(group({{"rw", "randread"}, {"size", "1M"}, {"verify", "true"}},
                    {{"rw", "randwrite"}, {"size", "1M"}, {"verify", "true"}}),
              HasSubstr("job 'a' verifies bytes 0-1M, which job 'b' writes"));
  // A mixed job writes unless it only reads.
  EXPECT_THAT(group({{"rw", "randrw"}, {"size", "1M"}, {"verify", "true"}},
                    {{"rw", "randrw"}, {"size", "1M"}}),
              HasSubstr("which job 'b' writes"));
  EXPECT_EQ(group({{"rw", "randread"}, {"size", "1M"}, {"verify", "true"}},
                  {{"rw", "randrw"}, {"rwmixread", "100"}, {"size", "1M"}}),
            "");
  // Every thread of a numjobs job counts: the second clone of 'b' meets 'a'.
  EXPECT_THAT(group({{"rw", "randread"}, {"size", "1M"}, {"offset", "4M"}, {"verify", "true"}},
                    {{"rw", "randwrite"},
                     {"size", "1M"},
                     {"numjobs", "2"},
                     {"offset", "3M"},
                     {"offset_increment", "1M"}}),
              HasSubstr("job 'a' verifies bytes 4M-5M, which job 'b' writes"));
  // Clones that pass between: apart.
  EXPECT_EQ(
      group({{"rw", "randread"}, {"size", "1M"}, {"offset", "1M"}, {"verify", "true"}},
            {{"rw", "randwrite"}, {"size", "1M"}, {"numjobs", "2"}, {"offset_increment", "2M"}}),
      "");
  // Regions that depend on the device are the agent's to check.
  EXPECT_EQ(group({{"rw", "randread"}, {"verify", "true"}}, {{"rw", "randwrite"}}), "");
}

// A run group: each job is checked, and what the jobs share (one device, one seed, one lead)
// must agree; the message names the job.
TEST(CheckRandioSpec, RunGroupJobsAreCheckedAndMustShareDeviceSeedAndLead) {
  auto group = [](std::initializer_list<std::pair<std::string, std::string>> other) {
    RandioSpec spec = Parse({{"rw", "randread"}});
    spec.set_name("a");
    RandioSpec b = Parse(other);
    b.set_name("b");
    *spec.add_group() = b;
    const common::Status s = common::CheckRandioSpec(spec);
    return s.ok() ? std::string() : std::string(s.message());
  };
  EXPECT_EQ(group({{"rw", "write"}, {"bs", "64k"}, {"iodepth", "8"}}), "");
  EXPECT_THAT(group({{"rw", "write"}, {"direct", "true"}}),
              HasSubstr("randio: job 'b': the jobs of a run group share one open device"));
  EXPECT_THAT(group({{"engine", "io_uring"}}), HasSubstr("engine and direct must be the same"));
  EXPECT_THAT(group({{"seed", "7"}}), HasSubstr("share one seed"));
  EXPECT_THAT(group({{"ramp_time", "1s"}, {"runtime", "2s"}}),
              HasSubstr("startdelay + ramp_time differs from job 'a''s"));
  EXPECT_EQ(group({{"verify", "true"}}), "");  // Each job verifies, or not, for itself.
  EXPECT_THAT(group({{"bs", "4k-6k"}}), HasSubstr("randio: job 'b': bs range"));
  EXPECT_THAT(group({{"numjobs", "256"}}), HasSubstr("come to 257 threads"));

  RandioSpec nested = Parse({{"rw", "read"}});
  nested.set_name("a");
  RandioSpec* b = nested.add_group();
  *b = nested;
  b->set_name("b");
  b->add_group()->set_name("c");
  EXPECT_THAT(std::string(common::CheckRandioSpec(nested).message()), HasSubstr("has no group"));
  RandioSpec unnamed = Parse({{"rw", "read"}});
  unnamed.set_name("a");
  *unnamed.add_group() = Parse({{"rw", "read"}});
  EXPECT_THAT(std::string(common::CheckRandioSpec(unnamed).message()),
              HasSubstr("job 2 of the run group needs a name"));
  // A group writes when any of its jobs does: the write interlocks must run.
  RandioSpec reads = Parse({{"rw", "randread"}});
  reads.set_name("a");
  EXPECT_FALSE(common::RandioWrites(reads));
  RandioSpec w = Parse({{"rw", "randwrite"}});
  w.set_name("w");
  *reads.add_group() = w;
  EXPECT_TRUE(common::RandioWrites(reads));
  EXPECT_FALSE(common::RandioJobWrites(reads));
}

TEST(RandioParams, ReadsFiosPacingAndSizingOptions) {
  const RandioSpec spec = Parse({{"rw", "randrw"},
                                 {"bssplit", "4k/10:16k/:64k/,8k/100"},
                                 {"blockalign", "8k"},
                                 {"norandommap", "1"},
                                 {"ioengine", "libaio"},
                                 {"direct", "1"},
                                 {"iodepth", "32"},
                                 {"iodepth_batch", "8"},
                                 {"iodepth_batch_complete", "4"},
                                 {"iodepth_batch_complete_max", "16"},
                                 {"iodepth_low", "24"},
                                 {"startdelay", "2s"},
                                 {"fsync_on_close", "1"},
                                 {"thinktime", "500us"},
                                 {"thinktime_spin", "100us"},
                                 {"thinktime_blocks", "8"},
                                 {"rate_iops", "1000"},
                                 {"rate_process", "poisson"},
                                 {"size", "50%"},
                                 {"offset", "10%"}});
  EXPECT_EQ(spec.engine(), RandioSpec::LIBAIO);
  // Empty shares split what the others leave (90%) equally.
  ASSERT_EQ(spec.bssplit_size(), 3);
  EXPECT_EQ(spec.bssplit(1).bs(), 16384u);
  EXPECT_EQ(spec.bssplit(1).percent(), 45u);
  EXPECT_EQ(spec.bssplit(2).percent(), 45u);
  ASSERT_EQ(spec.write_bssplit_size(), 1);
  EXPECT_EQ(spec.write_bssplit(0).bs(), 8192u);
  EXPECT_EQ(spec.bs_min(), 4096u);
  EXPECT_EQ(spec.bs_max(), 65536u);
  EXPECT_EQ(spec.blockalign(), 8192u);
  EXPECT_TRUE(spec.norandommap());
  EXPECT_EQ(spec.iodepth_batch_submit(), 8u);
  EXPECT_EQ(spec.iodepth_batch_complete_min(), 4u);
  EXPECT_EQ(spec.iodepth_batch_complete_max(), 16u);
  EXPECT_EQ(spec.iodepth_low(), 24u);
  EXPECT_EQ(spec.startdelay_nanos(), 2'000'000'000);
  EXPECT_TRUE(spec.end_fsync());
  EXPECT_EQ(spec.thinktime_nanos(), 500'000);
  EXPECT_EQ(spec.thinktime_spin_nanos(), 100'000);
  EXPECT_EQ(spec.thinktime_blocks(), 8u);
  EXPECT_TRUE(spec.rate_poisson());
  EXPECT_EQ(spec.size_percent(), 50u);
  EXPECT_EQ(spec.size_bytes(), 0u);
  EXPECT_EQ(spec.offset_percent(), 10u);
  EXPECT_TRUE(common::CheckRandioSpec(spec).ok()) << common::CheckRandioSpec(spec);
  EXPECT_EQ(DescribeRandio(spec),
            "randio randrw bssplit 4k/10:16k/45:64k/45,8k/100, iodepth 32, libaio, direct, 50% "
            "of the device at 10%, 60.0 s max, max 1000 IOPS per job (poisson), norandommap, "
            "aligned to 8 KiB, starting after 2.00 s, thinking 500 us every 8, end_fsync");
}

TEST(CheckRandioSpec, RefusesFiosOptionsThatCannotRun) {
  EXPECT_THAT(Check({{"rate_process", "poisson"}}), HasSubstr("poisson needs a rate"));
  EXPECT_THAT(Check({{"thinktime", "1ms"}, {"thinktime_spin", "2ms"}}),
              HasSubstr("thinktime_spin is longer than thinktime"));
  EXPECT_THAT(Check({{"thinktime_blocks", "4"}}), HasSubstr("applies with a thinktime"));
  EXPECT_THAT(Check({{"bssplit", "4k/50:6k/50"}}),
              HasSubstr("the largest size must be a multiple of the smallest"));
  EXPECT_THAT(Check({{"bssplit", "4k/50:6k/25:12k/25"}}),
              HasSubstr("bssplit size 6k is not a multiple of the smallest, 4k"));
  EXPECT_THAT(Check({{"bssplit", "4k/50:64k/50"}, {"bs", "8k"}}),
              HasSubstr("with bssplit, bs must be its smallest size"));
  EXPECT_THAT(Check({{"direct", "1"}, {"blockalign", "100"}}),
              HasSubstr("blockalign must be a multiple of 512"));
  EXPECT_THAT(Check({{"iodepth_batch_complete_min", "8"}, {"iodepth_batch_complete_max", "4"}}),
              HasSubstr("is over iodepth_batch_complete_max"));
}

TEST(RandioWrites, TellsReadOnlySpecs) {
  EXPECT_FALSE(common::RandioWrites(Parse({{"rw", "randread"}})));
  EXPECT_TRUE(common::RandioWrites(Parse({{"rw", "write"}})));
  EXPECT_TRUE(common::RandioWrites(Parse({{"rw", "randrw"}})));
  EXPECT_FALSE(common::RandioWrites(Parse({{"rw", "randrw"}, {"rwmixread", "100"}})));
  EXPECT_TRUE(common::RandioWrites(Parse({{"rw", "read"}, {"verify", "true"}})));
}

}  // namespace
}  // namespace stormark::controller
