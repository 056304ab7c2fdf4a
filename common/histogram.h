// A log-linear latency histogram, in the manner of HdrHistogram: each power of two is split
// into 2^kSubBucketBits equal sub-buckets, so a bucket's width is at most 1/128 of its lower
// bound. Values below 256 are exact. A percentile read from it is within 0.4% of the true
// value (the midpoint of a bucket whose width is at most 0.78% of the value).
//
// Histograms travel as sparse bucket counts (proto Histogram). Percentiles are computed only
// by the receiver, after merging: never average percentiles.
//
// The buckets are held up to the highest one used, so that a histogram of microsecond
// latencies holds a fifth of the 58 KiB that every uint64 value would need: a controller
// summarizing ten thousand hosts converts and merges ten thousand of them.
//
// Not thread-safe: one histogram per thread, merged afterwards.
#ifndef STORMARK_COMMON_HISTOGRAM_H_
#define STORMARK_COMMON_HISTOGRAM_H_

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr uint32_t kSubBuckets = 1u << kSubBucketBits;
  // Buckets for every uint64 value: kSubBuckets exact ones, then kSubBuckets per power of two.
  static constexpr uint32_t kBucketCount = kSubBuckets * (64 - kSubBucketBits + 1);

  LatencyHistogram() = default;

  // Adds one value (nanoseconds).
  void Record(uint64_t value);
  // Adds every value recorded in `other`.
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t sum() const { return sum_; }
  // 0 when empty.
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double Mean() const;

  // The value at percentile p (0 < p <= 100): the smallest recorded value v such that at
  // least p% of the values are <= v, estimated as its bucket's midpoint and clamped to
  // [min, max]. 0 when empty.
  uint64_t Percentile(double p) const;

  // Number of values recorded in bucket `index`.
  uint64_t BucketCount(uint32_t index) const {
    return index < buckets_.size() ? buckets_[index] : 0;
  }

  static uint32_t BucketIndex(uint64_t value);
  // Smallest value that falls in bucket `index`, and the bucket's width.
  static uint64_t BucketLowerBound(uint32_t index);
  static uint64_t BucketWidth(uint32_t index);

  void ToProto(stormark::v1::Histogram* out) const;
  // Fails on a histogram from a peer with another layout, or with corrupt indices.
  static StatusOr<LatencyHistogram> FromProto(const stormark::v1::Histogram& in);

 private:
  // Makes room for bucket `index` and the rest of its power of two.
  void Grow(uint32_t index);

  std::vector<uint64_t> buckets_;  // Up to the highest bucket used (or a little past it).
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace stormark::common

#endif  // STORMARK_COMMON_HISTOGRAM_H_
