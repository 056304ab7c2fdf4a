// What a worker thread measures: operation and byte counts, a latency histogram, and a
// per-interval time series. One Recorder per thread; Merge() combines them afterwards.
//
// Record() is called by the owning thread only. bytes() and ops() may be read from any
// thread at any time (for progress reports); everything else belongs to the owner until
// the run ends.
#ifndef STORMARK_COMMON_RECORDER_H_
#define STORMARK_COMMON_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/histogram.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

class Recorder {
 public:
  // `start_mono_nanos` is the monotonic time the timed region began; intervals of
  // `interval_nanos` are counted from it.
  explicit Recorder(int64_t start_mono_nanos, int64_t interval_nanos = 1'000'000'000);

  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // A run longer than this many intervals puts the rest in the last one.
  static constexpr size_t kMaxIntervals = 100'000;

  // One operation that completed at monotonic time `end_mono_nanos`, took `latency_nanos`
  // and moved `bytes` bytes (0 for a flush).
  void Record(int64_t end_mono_nanos, uint64_t latency_nanos, uint64_t bytes);

  // Adds another recorder's counts, histogram and series (same start and interval).
  void Merge(const Recorder& other);

  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  uint64_t ops() const { return ops_.load(std::memory_order_relaxed); }
  const LatencyHistogram& latency() const { return latency_; }

  // Writes the time series into `out`, with the last interval cut at `end_mono_nanos`.
  void SeriesToProto(int64_t end_mono_nanos,
                     google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>* out) const;

 private:
  struct Interval {
    uint64_t bytes = 0;
    uint64_t ops = 0;
    uint64_t latency_sum = 0;
  };

  const int64_t start_mono_nanos_;
  const int64_t interval_nanos_;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> ops_{0};
  LatencyHistogram latency_;
  std::vector<Interval> series_;
};

// The recorders of one run, one per worker thread. Add() and the totals are thread-safe,
// so a progress reporter can read totals while workers record.
class RecorderSet {
 public:
  RecorderSet(int64_t start_mono_nanos, int64_t interval_nanos = 1'000'000'000)
      : interval_nanos_(interval_nanos), start_mono_nanos_(start_mono_nanos) {}

  // A new recorder for one worker thread. The set keeps ownership; the pointer stays valid
  // for the set's lifetime.
  Recorder* Add();
  // Moves the start of the intervals (after a warm-up). Only before the first Add(): returns
  // false, and changes nothing, once a recorder exists.
  bool Rebase(int64_t start_mono_nanos);
  int64_t start_mono_nanos() const;
  int64_t interval_nanos() const { return interval_nanos_; }
  uint64_t TotalBytes() const;
  uint64_t TotalOps() const;
  // All recorders merged into one. Call after every worker has stopped.
  std::unique_ptr<Recorder> Merged() const;

 private:
  const int64_t interval_nanos_;
  mutable absl::Mutex mu_;
  int64_t start_mono_nanos_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Recorder>> recorders_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stormark::common

#endif  // STORMARK_COMMON_RECORDER_H_
