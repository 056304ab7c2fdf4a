#include "agent/workloads/randio/randio_offsets.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using stormark::v1::RandioSpec;

std::vector<RandioIo> Drain(const OffsetPlan& plan, size_t limit = 1 << 20) {
  OffsetSource source(plan);
  std::vector<RandioIo> ios;
  RandioIo io;
  while (ios.size() < limit && source.Next(&io)) ios.push_back(io);
  return ios;
}

TEST(RandomPermutation, IsABijectionForAwkwardSizes) {
  for (uint64_t n : {1ull, 2ull, 3ull, 1000ull, 4097ull, 65536ull}) {
    RandomPermutation p(n, 99);
    std::vector<bool> seen(n);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = p(i);
      ASSERT_LT(v, n);
      ASSERT_FALSE(seen[v]) << "n=" << n << " i=" << i;
      seen[v] = true;
    }
  }
}

TEST(RandomPermutation, KeysGiveDifferentOrders) {
  RandomPermutation a(1000, 1), b(1000, 2);
  int same = 0;
  for (uint64_t i = 0; i < 1000; ++i) same += a(i) == b(i);
  EXPECT_LT(same, 20);
}

TEST(OffsetSource, SequentialReadCoversTheRegionInOrder) {
  OffsetPlan plan;
  plan.rw = RandioSpec::READ;
  plan.base = 1 << 20;
  plan.size = 64 * 4096;
  const auto ios = Drain(plan);
  ASSERT_EQ(ios.size(), 64u);
  for (size_t i = 0; i < ios.size(); ++i) {
    EXPECT_FALSE(ios[i].write);
    EXPECT_EQ(ios[i].offset, (1u << 20) + i * 4096);
    EXPECT_EQ(ios[i].length, 4096u);
  }
}

TEST(OffsetSource, RandomMapVisitsEveryBlockOncePerPass) {
  OffsetPlan plan;
  plan.rw = RandioSpec::RANDWRITE;
  plan.size = 1000 * 4096;
  plan.time_based = true;
  const auto ios = Drain(plan, 3000);
  for (int pass = 0; pass < 3; ++pass) {
    std::set<uint64_t> offsets;
    for (int i = 0; i < 1000; ++i) {
      const RandioIo& io = ios[pass * 1000 + i];
      EXPECT_TRUE(io.write);
      offsets.insert(io.offset);
    }
    EXPECT_EQ(offsets.size(), 1000u) << "pass " << pass;
    EXPECT_EQ(*offsets.rbegin(), 999u * 4096);
  }
  // Passes differ in order.
  EXPECT_NE(ios[0].offset == ios[1000].offset && ios[1].offset == ios[1001].offset, true);
}

TEST(OffsetSource, SizeBoundJobStopsAfterSizeBytes) {
  OffsetPlan plan;
  plan.rw = RandioSpec::RANDREAD;
  plan.size = 256 * 4096;
  const auto ios = Drain(plan);
  EXPECT_EQ(ios.size(), 256u);
}

TEST(OffsetSource, BlockSizeRangeStaysInTheRegionInMultiplesOfTheSmallest) {
  OffsetPlan plan;
  plan.rw = RandioSpec::RANDREAD;
  plan.base = 8192;
  plan.size = 1 << 20;
  plan.bs_min = 4096;
  plan.bs_max = 65536;
  plan.time_based = true;
  std::set<uint32_t> lengths;
  for (const RandioIo& io : Drain(plan, 20000)) {
    EXPECT_EQ(io.length % 4096, 0u);
    EXPECT_GE(io.length, 4096u);
    EXPECT_LE(io.length, 65536u);
    EXPECT_EQ(io.offset % 4096, 0u);
    EXPECT_GE(io.offset, 8192u);
    EXPECT_LE(io.offset + io.length, 8192u + (1 << 20));
    lengths.insert(io.length);
  }
  EXPECT_EQ(lengths.size(), 16u);
}

TEST(OffsetSource, SizeBoundBlockSizeRangeMovesExactlySize) {
  OffsetPlan plan;
  plan.rw = RandioSpec::WRITE;
  plan.size = 1 << 20;
  plan.bs_min = 4096;
  plan.bs_max = 32768;
  uint64_t bytes = 0;
  for (const RandioIo& io : Drain(plan)) bytes += io.length;
  EXPECT_EQ(bytes, 1u << 20);
}

TEST(OffsetSource, MixHonoursRwmixread) {
  OffsetPlan plan;
  plan.rw = RandioSpec::RANDRW;
  plan.rwmixread = 70;
  plan.size = 100000 * 4096ull;
  size_t reads = 0;
  const auto ios = Drain(plan);
  for (const RandioIo& io : ios) reads += !io.write;
  EXPECT_NEAR(static_cast<double>(reads) / ios.size(), 0.70, 0.01);
}

TEST(OffsetSource, ReadwriteKeepsSeparateSequentialPositions) {
  OffsetPlan plan;
  plan.rw = RandioSpec::READWRITE;
  plan.size = 1000 * 4096;
  uint64_t next[2] = {0, 0};
  for (const RandioIo& io : Drain(plan)) {
    EXPECT_EQ(io.offset, next[io.write]);
    next[io.write] += 4096;
  }
  EXPECT_EQ(next[0] + next[1], 1000u * 4096);
}

TEST(ZipfGenerator, TopRankMatchesTheory) {
  constexpr uint64_t kN = 10000;
  for (double theta : {0.8, 1.2}) {
    ZipfGenerator zipf(kN, theta);
    common::Xoshiro256 random(3);
    std::map<uint64_t, int> counts;
    constexpr int kDraws = 400000;
    for (int i = 0; i < kDraws; ++i) {
      const uint64_t r = zipf.Next(random);
      ASSERT_LT(r, kN);
      ++counts[r];
    }
    double zeta = 0;
    for (uint64_t i = 1; i <= kN; ++i) zeta += std::pow(static_cast<double>(i), -theta);
    EXPECT_NEAR(counts[0] / static_cast<double>(kDraws), 1 / zeta, 0.01) << theta;
    EXPECT_NEAR(counts[1] / static_cast<double>(kDraws), std::pow(2, -theta) / zeta, 0.01) << theta;
    // The top 1% of ranks take their share (75% for 1.2, 30% for 0.8), not 1%.
    int top = 0;
    double top_share = 0;
    for (const auto& [rank, n] : counts) top += rank < kN / 100 ? n : 0;
    for (uint64_t i = 1; i <= kN / 100; ++i) top_share += std::pow(static_cast<double>(i), -theta);
    EXPECT_NEAR(top / static_cast<double>(kDraws), top_share / zeta, 0.03) << theta;
  }
}

TEST(OffsetSource, ZipfScattersHotBlocks) {
  OffsetPlan plan;
  plan.rw = RandioSpec::RANDREAD;
  plan.size = 100000 * 4096ull;
  plan.zipf = true;
  plan.zipf_theta = 1.2;
  std::map<uint64_t, int> hits;
  for (const RandioIo& io : Drain(plan, 100000)) ++hits[io.offset];
  const auto hottest = std::max_element(hits.begin(), hits.end(),
                                        [](auto& a, auto& b) { return a.second < b.second; });
  EXPECT_GT(hottest->second, 10000);  // One block takes over 10% of the reads...
  EXPECT_NE(hottest->first, 0u);      // ...and it is not simply the first block.
}

// norandommap: with replacement, a pass of as many I/Os as blocks misses some blocks and hits
// others twice (about 1/e of them missed, as for any draw with replacement).
TEST(OffsetSource, NorandommapDrawsWithReplacement) {
  OffsetPlan plan;
  plan.rw = RandioSpec::RANDREAD;
  plan.size = 4096 * 4096;
  plan.norandommap = true;
  const auto ios = Drain(plan);
  ASSERT_EQ(ios.size(), 4096u);
  std::set<uint64_t> distinct;
  for (const RandioIo& io : ios) {
    ASSERT_EQ(io.offset % 4096, 0u);
    ASSERT_LT(io.offset + io.length, plan.size + 1);
    distinct.insert(io.offset);
  }
  const double missed = 1 - static_cast<double>(distinct.size()) / 4096;
  EXPECT_NEAR(missed, std::exp(-1.0), 0.03);
  // Without it, the random map visits each block once.
  plan.norandommap = false;
  std::set<uint64_t> mapped;
  for (const RandioIo& io : Drain(plan)) mapped.insert(io.offset);
  EXPECT_EQ(mapped.size(), 4096u);
}

// bssplit: sizes follow their shares, per direction, and every I/O fits in the region at an
// offset that is a multiple of the smallest size.
TEST(OffsetSource, BssplitDrawsSizesByTheirShares) {
  OffsetPlan plan;
  plan.rw = RandioSpec::RANDRW;
  plan.rwmixread = 50;
  plan.size = 64 << 20;
  plan.bs_min = 4096;
  plan.bs_max = 65536;
  plan.read_split = {{4096, 10}, {16384, 60}, {65536, 30}};
  plan.write_split = {{8192, 100}};
  plan.time_based = true;
  std::map<uint32_t, int> reads, writes;
  for (const RandioIo& io : Drain(plan, 100000)) {
    (io.write ? writes : reads)[io.length]++;
    ASSERT_EQ(io.offset % 4096, 0u);
    ASSERT_LE(io.offset + io.length, plan.size);
  }
  const double read_total = reads[4096] + reads[16384] + reads[65536];
  EXPECT_EQ(reads.size(), 3u);
  EXPECT_NEAR(reads[4096] / read_total, 0.10, 0.01);
  EXPECT_NEAR(reads[16384] / read_total, 0.60, 0.01);
  EXPECT_NEAR(reads[65536] / read_total, 0.30, 0.01);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes.begin()->first, 8192u);
  // Sequential with a split: each I/O starts where the last one of its direction ended.
  plan.rw = RandioSpec::READ;
  plan.time_based = false;
  plan.size = 1 << 20;
  uint64_t next = 0;
  for (const RandioIo& io : Drain(plan)) {
    ASSERT_EQ(io.offset, next);
    next += io.length;
  }
  EXPECT_EQ(next, plan.size);
}

// Without blockalign, each direction's offsets are multiples of its own smallest size, as fio's
// min_bs per direction: bs=4k,16k writes 16 KiB at 16 KiB boundaries.
TEST(OffsetSource, EachDirectionAlignsToItsOwnSmallestSize) {
  OffsetPlan plan;
  plan.rw = RandioSpec::RANDRW;
  plan.size = 4 << 20;
  plan.bs_min = 4096;
  plan.bs_max = 16384;
  plan.read_split = {{4096, 100}};
  plan.write_split = {{16384, 100}};
  plan.time_based = true;
  bool odd_read = false;
  for (const RandioIo& io : Drain(plan, 20000)) {
    if (io.write) {
      ASSERT_EQ(io.offset % 16384, 0u);
      ASSERT_EQ(io.length, 16384u);
    } else {
      odd_read |= io.offset % 16384 != 0;
    }
  }
  EXPECT_TRUE(odd_read);  // Reads use every 4 KiB boundary.
}

// blockalign: random offsets are multiples of it, larger or smaller than bs.
TEST(OffsetSource, BlockalignAlignsRandomOffsets) {
  for (uint32_t align : {512u, 65536u}) {
    OffsetPlan plan;
    plan.rw = RandioSpec::RANDREAD;
    plan.size = 8 << 20;
    plan.bs_min = plan.bs_max = 4096;
    plan.align = align;
    std::set<uint64_t> residues;
    for (const RandioIo& io : Drain(plan)) {
      ASSERT_EQ(io.offset % align, 0u) << align;
      ASSERT_LE(io.offset + io.length, plan.size);
      residues.insert(io.offset % 4096);
    }
    // 512-byte alignment really uses the offsets between 4 KiB boundaries.
    if (align == 512) {
      EXPECT_GT(residues.size(), 4u);
    }
  }
}

}  // namespace
}  // namespace stormark::agent
