#include "common/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "common/strings.h"

namespace stormark::common {

void LatencyHistogram::Grow(uint32_t index) {
  // To the end of the index's power of two: a histogram grows a few times, not per value.
  const uint32_t end = std::min(kBucketCount, (index / kSubBuckets + 1) * kSubBuckets);
  buckets_.resize(std::max<size_t>(buckets_.size(), end), 0);
}

uint32_t LatencyHistogram::BucketIndex(uint64_t value) {
  if (value < 2 * kSubBuckets) return static_cast<uint32_t>(value);
  const int msb = 63 - std::countl_zero(value);
  const int shift = msb - kSubBucketBits;
  const uint64_t sub = (value >> shift) - kSubBuckets;  // 0 .. kSubBuckets-1
  return static_cast<uint32_t>(kSubBuckets * (shift + 1) + sub);
}

uint64_t LatencyHistogram::BucketLowerBound(uint32_t index) {
  if (index < 2 * kSubBuckets) return index;
  const uint32_t shift = index / kSubBuckets - 1;
  const uint64_t sub = index % kSubBuckets;
  return (kSubBuckets + sub) << shift;
}

uint64_t LatencyHistogram::BucketWidth(uint32_t index) {
  if (index < 2 * kSubBuckets) return 1;
  return uint64_t{1} << (index / kSubBuckets - 1);
}

void LatencyHistogram::Record(uint64_t value) {
  const uint32_t index = BucketIndex(value);
  if (index >= buckets_.size()) [[unlikely]] {
    Grow(index);
  }
  ++buckets_[index];
  ++count_;
  sum_ += value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.buckets_.size() > buckets_.size()) buckets_.resize(other.buckets_.size(), 0);
  for (size_t i = 0; i < other.buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double LatencyHistogram::Mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_);
}

uint64_t LatencyHistogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  // The epsilon keeps float noise from moving the rank up: 99.9% of 1000 is rank 999, though
  // 99.9 / 100.0 * 1000 computes as 999.0000000000001.
  uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_) - 1e-9));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (uint32_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      const uint64_t mid = BucketLowerBound(i) + (BucketWidth(i) - 1) / 2;
      return std::clamp(mid, min(), max_);
    }
  }
  return max_;
}

void LatencyHistogram::ToProto(stormark::v1::Histogram* out) const {
  out->Clear();
  out->set_sub_bucket_bits(kSubBucketBits);
  out->set_count(count_);
  out->set_sum(sum_);
  out->set_min(min());
  out->set_max(max_);
  for (uint32_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i] == 0) continue;
    out->add_bucket_index(i);
    out->add_bucket_count(buckets_[i]);
  }
}

StatusOr<LatencyHistogram> LatencyHistogram::FromProto(const stormark::v1::Histogram& in) {
  LatencyHistogram h;
  if (in.count() == 0 && in.bucket_index_size() == 0) return h;
  if (in.sub_bucket_bits() != kSubBucketBits) {
    return absl::InvalidArgumentError(common::StrCat(
        "histogram has ", in.sub_bucket_bits(), " sub-bucket bits, expected ", kSubBucketBits));
  }
  if (in.bucket_index_size() != in.bucket_count_size()) {
    return absl::InvalidArgumentError("histogram bucket indices and counts differ in length");
  }
  uint32_t highest = 0;
  for (int i = 0; i < in.bucket_index_size(); ++i) {
    if (in.bucket_index(i) >= kBucketCount) {
      return absl::InvalidArgumentError(
          common::StrCat("histogram bucket index ", in.bucket_index(i), " out of range"));
    }
    highest = std::max(highest, in.bucket_index(i));
  }
  if (in.bucket_index_size() > 0) h.Grow(highest);
  uint64_t total = 0;
  for (int i = 0; i < in.bucket_index_size(); ++i) {
    if (in.bucket_count(i) > UINT64_MAX - total) {
      return absl::InvalidArgumentError("histogram bucket counts overflow");
    }
    h.buckets_[in.bucket_index(i)] += in.bucket_count(i);
    total += in.bucket_count(i);
  }
  if (total != in.count()) {
    return absl::InvalidArgumentError(common::StrCat("histogram bucket counts add up to ", total,
                                                     ", but its count is ", in.count()));
  }
  // Percentile clamps to [min, max], which needs min <= max.
  if (in.count() != 0 && in.min() > in.max()) {
    return absl::InvalidArgumentError(
        common::StrCat("histogram min ", in.min(), " is above its max ", in.max()));
  }
  h.count_ = in.count();
  h.sum_ = in.sum();
  h.min_ = in.count() == 0 ? UINT64_MAX : in.min();
  h.max_ = in.max();
  return h;
}

}  // namespace stormark::common
