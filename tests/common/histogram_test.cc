#include "common/histogram.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::common {
namespace {

using ::testing::HasSubstr;

// The exact percentile by the histogram's definition: the smallest value v such that at
// least p% of the values are <= v.
uint64_t ExactPercentile(std::vector<uint64_t> sorted, double p) {
  const double n = static_cast<double>(sorted.size());
  // Without the epsilon, 99.9% of 10000 would compute as rank 9991 (float noise).
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * n - 1e-9));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void ExpectPercentilesClose(const std::vector<uint64_t>& values, const std::string& name) {
  LatencyHistogram h;
  for (uint64_t v : values) h.Record(v);
  std::vector<uint64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
    const double exact = static_cast<double>(ExactPercentile(sorted, p));
    const double got = static_cast<double>(h.Percentile(p));
    EXPECT_LE(std::fabs(got - exact), 0.01 * exact)
        << name << " p" << p << ": histogram " << got << ", exact " << exact;
  }
  EXPECT_EQ(h.count(), values.size());
  EXPECT_EQ(h.min(), sorted.front());
  EXPECT_EQ(h.max(), sorted.back());
}

TEST(LatencyHistogram, EmptyHistogramReportsZeros) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.sum(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.Mean(), 0.0);
  EXPECT_EQ(h.Percentile(50), 0u);
  EXPECT_EQ(h.Percentile(100), 0u);
}

TEST(LatencyHistogram, RankIsNotMovedUpByFloatNoise) {
  // 99.9% of 1000 values is the 999th value, not the maximum.
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 1000; ++v) h.Record(v * 1000);
  EXPECT_NEAR(static_cast<double>(h.Percentile(99.9)), 999000.0, 999000.0 * 0.01);
  EXPECT_EQ(h.Percentile(100), 1000000u);
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  for (uint64_t v = 0; v < 256; ++v) {
    EXPECT_EQ(LatencyHistogram::BucketIndex(v), v);
    EXPECT_EQ(LatencyHistogram::BucketLowerBound(static_cast<uint32_t>(v)), v);
    EXPECT_EQ(LatencyHistogram::BucketWidth(static_cast<uint32_t>(v)), 1u);
  }
}

TEST(LatencyHistogram, EveryValueFallsInsideItsBucket) {
  std::mt19937_64 rng(1);
  std::vector<uint64_t> values = {255,
                                  256,
                                  257,
                                  511,
                                  512,
                                  1000,
                                  1u << 20,
                                  (1u << 20) - 1,
                                  UINT64_MAX,
                                  UINT64_MAX - 1,
                                  uint64_t{1} << 63};
  for (int i = 0; i < 10000; ++i) values.push_back(rng() >> (rng() % 64));
  for (uint64_t v : values) {
    const uint32_t index = LatencyHistogram::BucketIndex(v);
    ASSERT_LT(index, LatencyHistogram::kBucketCount) << v;
    const uint64_t lower = LatencyHistogram::BucketLowerBound(index);
    const uint64_t width = LatencyHistogram::BucketWidth(index);
    EXPECT_LE(lower, v);
    EXPECT_LE(v - lower, width - 1) << v;
  }
}

TEST(LatencyHistogram, BucketsTileTheRangeWithoutGaps) {
  for (uint32_t i = 0; i + 1 < LatencyHistogram::kBucketCount; ++i) {
    ASSERT_EQ(LatencyHistogram::BucketLowerBound(i) + LatencyHistogram::BucketWidth(i),
              LatencyHistogram::BucketLowerBound(i + 1))
        << "bucket " << i;
  }
  const uint32_t last = LatencyHistogram::kBucketCount - 1;
  EXPECT_EQ(LatencyHistogram::BucketLowerBound(last) - 1 + LatencyHistogram::BucketWidth(last),
            UINT64_MAX);
}

TEST(LatencyHistogram, BucketWidthIsAtMostOne128thOfLowerBound) {
  for (uint32_t i = 256; i < LatencyHistogram::kBucketCount; ++i) {
    EXPECT_LE(LatencyHistogram::BucketWidth(i) * 128, LatencyHistogram::BucketLowerBound(i)) << i;
  }
}

TEST(LatencyHistogram, TracksCountSumMinMaxAndMean) {
  LatencyHistogram h;
  h.Record(300);
  h.Record(100);
  h.Record(2000);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.sum(), 2400u);
  EXPECT_EQ(h.min(), 100u);
  EXPECT_EQ(h.max(), 2000u);
  EXPECT_DOUBLE_EQ(h.Mean(), 800.0);
}

TEST(LatencyHistogram, PercentilesOfSmallExactValues) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100; ++v) h.Record(v);
  EXPECT_EQ(h.Percentile(1), 1u);
  EXPECT_EQ(h.Percentile(50), 50u);
  EXPECT_EQ(h.Percentile(50.5), 51u);
  EXPECT_EQ(h.Percentile(99), 99u);
  EXPECT_EQ(h.Percentile(100), 100u);
}

TEST(LatencyHistogram, PercentileIsClampedToMinAndMax) {
  LatencyHistogram h;
  h.Record(1'000'001);
  EXPECT_EQ(h.Percentile(1), 1'000'001u);
  EXPECT_EQ(h.Percentile(50), 1'000'001u);
  EXPECT_EQ(h.Percentile(100), 1'000'001u);
}

TEST(LatencyHistogram, PercentilesMatchExactOnUniformData) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<uint64_t> dist(1'000, 10'000'000);
  std::vector<uint64_t> values(20000);
  for (auto& v : values) v = dist(rng);
  ExpectPercentilesClose(values, "uniform");
}

TEST(LatencyHistogram, PercentilesMatchExactOnExponentialData) {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> dist(1.0 / 200'000.0);
  std::vector<uint64_t> values(20000);
  for (auto& v : values) v = static_cast<uint64_t>(dist(rng)) + 1;
  ExpectPercentilesClose(values, "exponential");
}

TEST(LatencyHistogram, PercentilesMatchExactOnLogNormalData) {
  std::mt19937_64 rng(99);
  std::lognormal_distribution<double> dist(11.0, 1.5);
  std::vector<uint64_t> values(20000);
  for (auto& v : values) v = static_cast<uint64_t>(dist(rng));
  ExpectPercentilesClose(values, "lognormal");
}

TEST(LatencyHistogram, PercentilesMatchExactOnBimodalData) {
  // A cache-hit mode around 50 us and a disk mode around 8 ms.
  std::mt19937_64 rng(3);
  std::normal_distribution<double> fast(50'000, 5'000);
  std::normal_distribution<double> slow(8'000'000, 1'000'000);
  std::bernoulli_distribution pick_slow(0.1);
  std::vector<uint64_t> values(20000);
  for (auto& v : values) {
    v = static_cast<uint64_t>(std::max(1.0, pick_slow(rng) ? slow(rng) : fast(rng)));
  }
  ExpectPercentilesClose(values, "bimodal");
}

TEST(LatencyHistogram, PercentilesMatchExactOnWideRangeData) {
  // Values spread over every magnitude from 1 ns to hours.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> exponent(0, 43);
  std::vector<uint64_t> values(20000);
  for (auto& v : values) v = static_cast<uint64_t>(std::exp2(exponent(rng)));
  ExpectPercentilesClose(values, "wide");
}

TEST(LatencyHistogram, MergeKeepsMinAndMax) {
  LatencyHistogram a;
  a.Record(500);
  a.Record(700);
  LatencyHistogram b;
  b.Record(100);
  b.Record(90'000);
  a.Merge(b);
  EXPECT_EQ(a.min(), 100u);
  EXPECT_EQ(a.max(), 90'000u);
  EXPECT_EQ(a.count(), 4u);
  EXPECT_EQ(a.sum(), 91'300u);
}

TEST(LatencyHistogram, MergeWithEmptyChangesNothing) {
  LatencyHistogram a;
  a.Record(500);
  a.Record(700);
  a.Merge(LatencyHistogram());
  EXPECT_EQ(a.count(), 2u);
  EXPECT_EQ(a.min(), 500u);
  EXPECT_EQ(a.max(), 700u);

  LatencyHistogram empty;
  empty.Merge(a);
  EXPECT_EQ(empty.count(), 2u);
  EXPECT_EQ(empty.min(), 500u);
  EXPECT_EQ(empty.max(), 700u);
  EXPECT_EQ(empty.Percentile(100), 700u);
}

TEST(LatencyHistogram, MergedEqualsRecordingEverythingInOne) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> dist(10.0, 2.0);
  LatencyHistogram parts[4];
  LatencyHistogram whole;
  for (int i = 0; i < 8000; ++i) {
    const uint64_t v = static_cast<uint64_t>(dist(rng));
    parts[i % 4].Record(v);
    whole.Record(v);
  }
  LatencyHistogram merged;
  for (const auto& part : parts) merged.Merge(part);
  EXPECT_EQ(merged.count(), whole.count());
  EXPECT_EQ(merged.sum(), whole.sum());
  EXPECT_EQ(merged.min(), whole.min());
  EXPECT_EQ(merged.max(), whole.max());
  for (uint32_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    ASSERT_EQ(merged.BucketCount(i), whole.BucketCount(i)) << "bucket " << i;
  }
  for (double p : {50.0, 90.0, 99.0, 99.9}) EXPECT_EQ(merged.Percentile(p), whole.Percentile(p));
}

// The buckets are held only up to the highest used: histograms of different ranges must merge
// in either order, up to the last bucket, as if everything had gone into one.
TEST(LatencyHistogram, HistogramsOfDifferentRangesMergeInEitherOrder) {
  LatencyHistogram small, wide, whole;
  for (uint64_t v : {3u, 200u, 5000u}) {
    small.Record(v);
    whole.Record(v);
  }
  for (uint64_t v : {uint64_t{1} << 40, uint64_t{7}, UINT64_MAX}) {
    wide.Record(v);
    whole.Record(v);
  }
  LatencyHistogram small_first = small, wide_first = wide;
  small_first.Merge(wide);
  wide_first.Merge(small);
  for (const LatencyHistogram* merged : {&small_first, &wide_first}) {
    EXPECT_EQ(merged->count(), 6u);
    EXPECT_EQ(merged->max(), UINT64_MAX);
    for (uint32_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
      ASSERT_EQ(merged->BucketCount(i), whole.BucketCount(i)) << "bucket " << i;
    }
    for (double p : {10.0, 50.0, 90.0, 100.0})
      EXPECT_EQ(merged->Percentile(p), whole.Percentile(p));
  }
  EXPECT_EQ(LatencyHistogram().BucketCount(LatencyHistogram::kBucketCount - 1), 0u);
  stormark::v1::Histogram proto;
  small_first.ToProto(&proto);
  auto back = LatencyHistogram::FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->BucketCount(LatencyHistogram::kBucketCount - 1), 1u);
  EXPECT_EQ(back->Percentile(100), whole.Percentile(100));
}

TEST(LatencyHistogram, ProtoRoundTripKeepsEverything) {
  std::mt19937_64 rng(13);
  std::exponential_distribution<double> dist(1e-5);
  LatencyHistogram h;
  for (int i = 0; i < 5000; ++i) h.Record(static_cast<uint64_t>(dist(rng)) + 3);

  stormark::v1::Histogram proto;
  h.ToProto(&proto);
  EXPECT_EQ(proto.sub_bucket_bits(), 7u);
  EXPECT_EQ(proto.bucket_index_size(), proto.bucket_count_size());
  EXPECT_LT(proto.bucket_index_size(), 5000) << "buckets must travel sparse";
  EXPECT_TRUE(std::is_sorted(proto.bucket_index().begin(), proto.bucket_index().end()));

  StatusOr<LatencyHistogram> back = LatencyHistogram::FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->count(), h.count());
  EXPECT_EQ(back->sum(), h.sum());
  EXPECT_EQ(back->min(), h.min());
  EXPECT_EQ(back->max(), h.max());
  for (uint32_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    ASSERT_EQ(back->BucketCount(i), h.BucketCount(i)) << "bucket " << i;
  }
  for (double p : {1.0, 50.0, 99.0, 100.0}) EXPECT_EQ(back->Percentile(p), h.Percentile(p));
}

TEST(LatencyHistogram, EmptyProtoRoundTripIsEmpty) {
  stormark::v1::Histogram proto;
  LatencyHistogram().ToProto(&proto);
  EXPECT_EQ(proto.count(), 0u);
  EXPECT_EQ(proto.bucket_index_size(), 0);
  StatusOr<LatencyHistogram> back = LatencyHistogram::FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->count(), 0u);
  EXPECT_EQ(back->min(), 0u);

  // A merged-in empty histogram must not lower the minimum.
  LatencyHistogram h;
  h.Record(1000);
  h.Merge(*back);
  EXPECT_EQ(h.min(), 1000u);
}

TEST(LatencyHistogram, ToProtoClearsTheOutput) {
  stormark::v1::Histogram proto;
  LatencyHistogram a;
  a.Record(5);
  a.ToProto(&proto);
  LatencyHistogram b;
  b.Record(9);
  b.ToProto(&proto);
  ASSERT_EQ(proto.bucket_index_size(), 1);
  EXPECT_EQ(proto.bucket_index(0), 9u);
  EXPECT_EQ(proto.count(), 1u);
}

stormark::v1::Histogram ValidProto() {
  LatencyHistogram h;
  h.Record(10);
  h.Record(1000);
  h.Record(1'000'000);
  stormark::v1::Histogram proto;
  h.ToProto(&proto);
  return proto;
}

TEST(LatencyHistogram, FromProtoRejectsAnotherLayout) {
  stormark::v1::Histogram proto = ValidProto();
  proto.set_sub_bucket_bits(5);
  StatusOr<LatencyHistogram> h = LatencyHistogram::FromProto(proto);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(h.status().message(), HasSubstr("5 sub-bucket bits"));
  EXPECT_THAT(h.status().message(), HasSubstr("expected 7"));
}

TEST(LatencyHistogram, FromProtoRejectsMissingLayout) {
  stormark::v1::Histogram proto = ValidProto();
  proto.clear_sub_bucket_bits();
  EXPECT_FALSE(LatencyHistogram::FromProto(proto).ok());
}

TEST(LatencyHistogram, FromProtoRejectsIndexOutOfRange) {
  stormark::v1::Histogram proto = ValidProto();
  proto.set_bucket_index(1, LatencyHistogram::kBucketCount);
  StatusOr<LatencyHistogram> h = LatencyHistogram::FromProto(proto);
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.status().message(), HasSubstr("out of range"));
}

TEST(LatencyHistogram, FromProtoRejectsMismatchedLengths) {
  stormark::v1::Histogram proto = ValidProto();
  proto.add_bucket_index(300);
  StatusOr<LatencyHistogram> h = LatencyHistogram::FromProto(proto);
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.status().message(), HasSubstr("differ in length"));
}

TEST(LatencyHistogram, FromProtoRejectsCountThatDisagreesWithBuckets) {
  stormark::v1::Histogram proto = ValidProto();
  proto.set_count(4);
  StatusOr<LatencyHistogram> h = LatencyHistogram::FromProto(proto);
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h.status().message(), HasSubstr("add up to 3"));

  proto = ValidProto();
  proto.set_count(0);
  EXPECT_FALSE(LatencyHistogram::FromProto(proto).ok());
}

TEST(LatencyHistogram, FromProtoRejectsBucketCountsThatOverflow) {
  // Two buckets whose counts wrap around to the claimed total.
  stormark::v1::Histogram proto;
  proto.set_sub_bucket_bits(7);
  proto.set_count(1);
  proto.set_min(5);
  proto.set_max(6);
  proto.add_bucket_index(5);
  proto.add_bucket_count(UINT64_MAX);
  proto.add_bucket_index(6);
  proto.add_bucket_count(2);
  EXPECT_FALSE(LatencyHistogram::FromProto(proto).ok());
}

TEST(LatencyHistogram, FromProtoRejectsMinAboveMax) {
  stormark::v1::Histogram proto = ValidProto();
  proto.set_min(2'000'000);
  EXPECT_FALSE(LatencyHistogram::FromProto(proto).ok());
}

}  // namespace
}  // namespace stormark::common
