#include "common/memory_estimate.h"

#include <cstdint>

#include "common/histogram.h"
#include "common/workloads/stream/stream_spec.h"
#include "common/workloads/bonnie/bonnie_spec.h"
#include "common/workloads/command/command_spec.h"
#include "common/workloads/postmark/postmark_spec.h"
#include "common/workloads/randio/randio_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::common {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;

const MemoryPart* Part(const MemoryEstimate& e, std::string_view name) {
  for (const MemoryPart& part : e.parts) {
    if (part.name == name) return &part;
  }
  return nullptr;
}

stormark::v1::RandioSpec Randio(uint32_t iodepth, uint32_t bs, uint32_t numjobs) {
  stormark::v1::RandioSpec spec;
  spec.set_rw(stormark::v1::RandioSpec::RANDREAD);
  spec.set_iodepth(iodepth);
  spec.set_bs_min(bs);
  spec.set_numjobs(numjobs);
  return spec;
}

TEST(IoBufferBytes, SmallBuffersTakeWholePagesLargeOnesWholeHugePages) {
  EXPECT_EQ(IoBufferBytes(0), 4 * kKiB);
  EXPECT_EQ(IoBufferBytes(512), 4 * kKiB);
  EXPECT_EQ(IoBufferBytes(64 * kKiB), 64 * kKiB);
  EXPECT_EQ(IoBufferBytes(256 * kKiB), 2 * kMiB);
  EXPECT_EQ(IoBufferBytes(1 * kMiB), 2 * kMiB);
  EXPECT_EQ(IoBufferBytes(3 * kMiB), 4 * kMiB);
  EXPECT_EQ(IoBufferBytes(64 * kMiB), 64 * kMiB);
}

TEST(MemoryEstimate, RandioBuffersAreJobsTimesDepthTimesBlocks) {
  const MemoryEstimate e = EstimateMemory(Randio(4096, 1 << 20, 1), 0);
  const MemoryPart* buffers = Part(e, "buffers");
  ASSERT_NE(buffers, nullptr);
  // A 1 MiB block sits in a 2 MiB huge page.
  EXPECT_EQ(buffers->bytes, 4096 * 2 * kMiB);
  EXPECT_EQ(buffers->breakdown, "iodepth 4096 x bs 1 MiB x 1 job, 2 MiB each");
  EXPECT_EQ(e.dominant(), buffers);
  EXPECT_GT(e.total(), buffers->bytes);
  EXPECT_LT(e.total(), buffers->bytes + 2 * kMiB + 4096 * 256 + 3 * HistogramBytes() + 1);
  EXPECT_EQ(e.Describe(),
            "randio needs 8.00 GiB of memory (buffers: iodepth 4096 x bs 1 MiB "
            "x 1 job, 2 MiB each)");
}

TEST(MemoryEstimate, RandioCountsEveryJobsQueueAndRecorders) {
  const MemoryEstimate e = EstimateMemory(Randio(1, 64 << 20, 256), 0);
  EXPECT_EQ(Part(e, "buffers")->bytes, 256 * 64 * kMiB);
  EXPECT_EQ(Part(e, "buffers")->breakdown, "iodepth 1 x bs 64 MiB x 256 jobs");
  EXPECT_EQ(Part(e, "queue state")->bytes, 256 * kRandioBytesPerRequest);
  EXPECT_EQ(Part(e, "recorders")->bytes, 256 * 3 * HistogramBytes());
  EXPECT_EQ(Part(e, "verify book"), nullptr);
  // 0 means 1, as the workload takes it; bs_max above bs_min sizes the buffers.
  stormark::v1::RandioSpec range = Randio(0, 4096, 0);
  range.set_bs_max(128 * 1024);
  EXPECT_EQ(Part(EstimateMemory(range, 0), "buffers")->bytes, 128 * kKiB);
}

TEST(MemoryEstimate, RandioSeriesGrowWithTheRuntime) {
  stormark::v1::RandioSpec spec = Randio(1, 4096, 2);
  const uint64_t without = Part(EstimateMemory(spec, 0), "recorders")->bytes;
  spec.set_runtime_nanos(int64_t{3600} * 1'000'000'000);
  const uint64_t with = Part(EstimateMemory(spec, 0), "recorders")->bytes;
  EXPECT_EQ(with - without, 2 * 3 * 3601 * kRandioSeriesBytesPerInterval);
  // Ten intervals a second (fio's log_avg_msec=100): ten times the series.
  const uint64_t fine = Part(EstimateMemory(spec, 0, 100), "recorders")->bytes;
  EXPECT_EQ(fine - without, 2 * 3 * 36001 * kRandioSeriesBytesPerInterval);
}

TEST(MemoryEstimate, ARunGroupCountsEachOfItsJobs) {
  stormark::v1::RandioSpec spec = Randio(4, 4096, 1);
  spec.set_name("a");
  stormark::v1::RandioSpec* b = spec.add_group();
  *b = Randio(2, 65536, 3);
  b->set_name("b");
  const MemoryEstimate e = EstimateMemory(spec, 0);
  EXPECT_EQ(Part(e, "job 'a': buffers")->bytes, 4 * 4 * kKiB);
  EXPECT_EQ(Part(e, "job 'b': buffers")->bytes, 2 * 3 * 64 * kKiB);
}

TEST(MemoryEstimate, RandioVerifyBookFollowsTheRegion) {
  stormark::v1::RandioSpec spec = Randio(1, 4096, 1);
  spec.set_verify(true);
  // 1 GiB of 4 KiB units, 4 bytes each.
  EXPECT_EQ(Part(EstimateMemory(spec, kGiB), "the verify book")->bytes,
            (kGiB / 4096 + 1) * kVerifyBytesPerUnit);
  spec.set_size_bytes(kGiB / 2);  // The spec's size wins over the target's.
  EXPECT_EQ(Part(EstimateMemory(spec, kGiB), "the verify book")->bytes,
            (kGiB / 2 / 4096 + 1) * kVerifyBytesPerUnit);
  spec.set_bs_min(512);  // 512-byte units.
  EXPECT_EQ(Part(EstimateMemory(spec, 0), "the verify book")->bytes,
            (kGiB / 2 / 512 + 1) * kVerifyBytesPerUnit);
  // A device of unknown size: the book at its largest.
  spec.set_size_bytes(0);
  const MemoryPart* book = Part(EstimateMemory(spec, 0), "the verify book");
  EXPECT_EQ(book->bytes, kVerifyMaxUnits * kVerifyBytesPerUnit);
  EXPECT_THAT(book->breakdown, HasSubstr("not known yet"));
}

// The verifying jobs of a run group share one unit, the smallest of theirs: a job of 4 KiB
// blocks verifying next to one of 512-byte blocks keeps 8 times the book it would alone.
TEST(MemoryEstimate, RandioRunGroupVerifyBooksShareTheSmallestUnit) {
  stormark::v1::RandioSpec spec = Randio(1, 4096, 1);
  spec.set_name("pages");
  spec.set_verify(true);
  spec.set_size_bytes(64 * kMiB);
  stormark::v1::RandioSpec* small = spec.add_group();
  *small = Randio(1, 512, 1);
  small->set_name("sectors");
  small->set_size_bytes(kMiB);
  small->set_offset_bytes(64 * kMiB);
  EXPECT_EQ(Part(EstimateMemory(spec, 0), "job 'pages': the verify book")->bytes,
            (64 * kMiB / 4096 + 1) * kVerifyBytesPerUnit);
  EXPECT_EQ(Part(EstimateMemory(spec, 0), "job 'sectors': the verify book"), nullptr);
  small->set_verify(true);
  EXPECT_EQ(Part(EstimateMemory(spec, 0), "job 'pages': the verify book")->bytes,
            (64 * kMiB / 512 + 1) * kVerifyBytesPerUnit);
  EXPECT_EQ(Part(EstimateMemory(spec, 0), "job 'sectors': the verify book")->bytes,
            (kMiB / 512 + 1) * kVerifyBytesPerUnit);
}

TEST(MemoryEstimate, StreamIsItsBlockBuffer) {
  stormark::v1::StreamSpec spec;
  spec.set_block_size(64 << 20);
  const MemoryEstimate e = EstimateMemory(spec);
  EXPECT_EQ(e.dominant()->name, "its block buffer");
  EXPECT_EQ(e.dominant()->bytes, 64 * kMiB);
  EXPECT_EQ(e.total(), 64 * kMiB + 2 * kMiB + HistogramBytes());
}

TEST(MemoryEstimate, BonnieCountsSeekerBuffersAndFileNames) {
  stormark::v1::BonnieSpec spec;
  spec.set_chunk_size(64 << 20);
  spec.set_seekers(1024);
  MemoryEstimate e = EstimateMemory(spec);
  EXPECT_EQ(Part(e, "chunk buffers")->bytes, 1025 * 64 * kMiB);
  EXPECT_EQ(Part(e, "chunk buffers")->breakdown, "(1 + seekers 1024) x chunk 64 MiB");
  EXPECT_EQ(Part(e, "file names"), nullptr);

  stormark::v1::BonnieSpec files;
  files.set_skip_io(true);
  files.set_files_k(1024);
  e = EstimateMemory(files);
  EXPECT_EQ(Part(e, "chunk buffers"), nullptr);
  EXPECT_EQ(e.dominant()->name, "file names");
  EXPECT_EQ(e.dominant()->bytes, 1024 * 1024 * (kBonnieBytesPerName + kDirBytesPerName));
  EXPECT_EQ(e.dominant()->knobs, "files");

  // bonnie++'s defaults: an 8k chunk and 5 seekers.
  EXPECT_EQ(Part(EstimateMemory(stormark::v1::BonnieSpec()), "chunk buffers")->bytes, 6 * 8192);
}

TEST(MemoryEstimate, PostmarkCountsItsTableNamesAndText) {
  stormark::v1::PostmarkSpec spec;
  spec.set_number(10'000'000);
  spec.set_transactions(20'000'000);
  spec.set_min_size_bytes(1);
  spec.set_max_size_bytes(256 << 20);
  const MemoryEstimate e = EstimateMemory(spec);
  EXPECT_EQ(Part(e, "the file table")->bytes, 2 * 10'000'000 * kPostmarkBytesPerSlot);
  // The pool plus one file per transaction, but never more than the table
  // holds.
  EXPECT_EQ(Part(e, "file names")->bytes, 2 * 10'000'000 * kDirBytesPerName);
  EXPECT_EQ(Part(e, "the text files are written from")->bytes, 256 * kMiB);
  EXPECT_EQ(e.dominant()->knobs, "number");
  // PostMark's defaults: 500 files of up to 10000 bytes, 512-byte reads.
  const MemoryEstimate defaults = EstimateMemory(stormark::v1::PostmarkSpec());
  EXPECT_EQ(Part(defaults, "the file table")->bytes, 1000 * kPostmarkBytesPerSlot);
  EXPECT_EQ(Part(defaults, "the text files are written from")->bytes, 10000u);
  EXPECT_EQ(Part(defaults, "the read buffer")->bytes, 512u);
}

TEST(MemoryEstimate, CommandIsSmall) {
  stormark::v1::CommandSpec spec;
  spec.set_shell("tar xf linux.tar");
  EXPECT_LT(EstimateMemory(spec).total(), kMiB);
}

TEST(MemoryEstimate, HostileValuesSaturateInsteadOfWrapping) {
  stormark::v1::RandioSpec spec = Randio(UINT32_MAX, UINT32_MAX, UINT32_MAX);
  spec.set_runtime_nanos(INT64_MAX);
  spec.set_ramp_time_nanos(INT64_MAX);
  spec.set_verify(true);
  spec.set_offset_increment_bytes(UINT64_MAX);
  EXPECT_EQ(EstimateMemory(spec, 0).total(), UINT64_MAX);
}

TEST(DescribeOverBudget, NamesTheParametersTheLimitAndWhatToLower) {
  const MemoryEstimate e = EstimateMemory(Randio(4096, 1 << 20, 1), 0);
  EXPECT_EQ(DescribeOverBudget(e, 6 * kGiB, "a quarter of its RAM"),
            "randio needs 8.00 GiB of memory (buffers: iodepth 4096 x bs 1 MiB "
            "x 1 job, 2 MiB each), "
            "over this agent's limits.max_memory of 6 GiB (a quarter of its "
            "RAM); lower iodepth, "
            "bs or numjobs, or raise limits.max_memory");
  EXPECT_THAT(DescribeOverBudget(e, kGiB, ""),
              HasSubstr("limits.max_memory of 1 GiB; lower iodepth"));
}

}  // namespace
}  // namespace stormark::common
