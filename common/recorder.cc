#include "common/recorder.h"

#include <algorithm>

namespace stormark::common {

Recorder::Recorder(int64_t start_mono_nanos, int64_t interval_nanos)
    : start_mono_nanos_(start_mono_nanos), interval_nanos_(std::max<int64_t>(1, interval_nanos)) {}

void Recorder::Record(int64_t end_mono_nanos, uint64_t latency_nanos, uint64_t bytes) {
  latency_.Record(latency_nanos);
  bytes_.store(bytes_.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
  ops_.store(ops_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  const int64_t since_start = std::max<int64_t>(0, end_mono_nanos - start_mono_nanos_);
  const size_t index =
      std::min(kMaxIntervals - 1, static_cast<size_t>(since_start / interval_nanos_));
  if (index >= series_.size()) series_.resize(index + 1);
  series_[index].bytes += bytes;
  series_[index].ops += 1;
  series_[index].latency_sum += latency_nanos;
}

void Recorder::Merge(const Recorder& other) {
  latency_.Merge(other.latency_);
  bytes_.fetch_add(other.bytes(), std::memory_order_relaxed);
  ops_.fetch_add(other.ops(), std::memory_order_relaxed);
  if (other.series_.size() > series_.size()) series_.resize(other.series_.size());
  for (size_t i = 0; i < other.series_.size(); ++i) {
    series_[i].bytes += other.series_[i].bytes;
    series_[i].ops += other.series_[i].ops;
    series_[i].latency_sum += other.series_[i].latency_sum;
  }
}

void Recorder::SeriesToProto(
    int64_t end_mono_nanos,
    google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>* out) const {
  out->Clear();
  const int64_t total = std::max<int64_t>(0, end_mono_nanos - start_mono_nanos_);
  // Ops that completed exactly at the end belong to the last interval, not a new empty one.
  // The last interval holds the rest of a run longer than kMaxIntervals.
  const size_t intervals = std::clamp<size_t>(
      static_cast<size_t>((total + interval_nanos_ - 1) / interval_nanos_), 1, kMaxIntervals);
  for (size_t i = 0; i < intervals; ++i) {
    const int64_t offset = static_cast<int64_t>(i) * interval_nanos_;
    auto* sample = out->Add();
    sample->set_offset_nanos(offset);
    sample->set_length_nanos(i + 1 == intervals
                                 ? std::max<int64_t>(0, total - offset)
                                 : std::min<int64_t>(total - offset, interval_nanos_));
  }
  for (size_t i = 0; i < series_.size(); ++i) {
    auto* sample = out->Mutable(static_cast<int>(std::min(i, intervals - 1)));
    sample->set_bytes(sample->bytes() + series_[i].bytes);
    sample->set_ops(sample->ops() + series_[i].ops);
    sample->set_latency_sum_nanos(sample->latency_sum_nanos() + series_[i].latency_sum);
  }
}

Recorder* RecorderSet::Add() {
  absl::MutexLock lock(&mu_);
  recorders_.push_back(std::make_unique<Recorder>(start_mono_nanos_, interval_nanos_));
  return recorders_.back().get();
}

bool RecorderSet::Rebase(int64_t start_mono_nanos) {
  absl::MutexLock lock(&mu_);
  if (!recorders_.empty()) return false;
  start_mono_nanos_ = start_mono_nanos;
  return true;
}

int64_t RecorderSet::start_mono_nanos() const {
  absl::MutexLock lock(&mu_);
  return start_mono_nanos_;
}

uint64_t RecorderSet::TotalBytes() const {
  absl::MutexLock lock(&mu_);
  uint64_t total = 0;
  for (const auto& r : recorders_) total += r->bytes();
  return total;
}

uint64_t RecorderSet::TotalOps() const {
  absl::MutexLock lock(&mu_);
  uint64_t total = 0;
  for (const auto& r : recorders_) total += r->ops();
  return total;
}

std::unique_ptr<Recorder> RecorderSet::Merged() const {
  absl::MutexLock lock(&mu_);
  auto merged = std::make_unique<Recorder>(start_mono_nanos_, interval_nanos_);
  for (const auto& r : recorders_) merged->Merge(*r);
  return merged;
}

}  // namespace stormark::common
