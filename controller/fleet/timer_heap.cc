#include "controller/fleet/timer_heap.h"

#include <algorithm>

namespace stormark::controller {
namespace {

// Below this many entries a rebuild is not worth its pass.
constexpr size_t kCompactAbove = 64;

}  // namespace

TimerHeap::TimerHeap(size_t keys) : generation_(keys, 0), when_(keys, 0), armed_(keys, 0) {}

void TimerHeap::Set(size_t key, int64_t when) {
  if (!armed_[key]) ++live_;
  armed_[key] = 1;
  when_[key] = when;
  heap_.push_back(Entry{.when = when, .key = key, .generation = ++generation_[key]});
  std::push_heap(heap_.begin(), heap_.end(), Later);
  CompactIfStale();
}

void TimerHeap::Cancel(size_t key) {
  if (!armed_[key]) return;
  armed_[key] = 0;
  --live_;
  CompactIfStale();
}

std::optional<int64_t> TimerHeap::when(size_t key) const {
  if (!armed_[key]) return std::nullopt;
  return when_[key];
}

std::optional<int64_t> TimerHeap::Next() {
  DropStaleTop();
  if (heap_.empty()) return std::nullopt;
  return heap_.front().when;
}

std::vector<size_t> TimerHeap::TakeDue(int64_t now) {
  std::vector<size_t> due;
  for (DropStaleTop(); !heap_.empty() && heap_.front().when <= now; DropStaleTop()) {
    const size_t key = heap_.front().key;
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    heap_.pop_back();
    armed_[key] = 0;
    --live_;
    due.push_back(key);
  }
  CompactIfStale();
  return due;
}

void TimerHeap::DropStaleTop() {
  while (!heap_.empty() && Stale(heap_.front())) {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    heap_.pop_back();
  }
}

void TimerHeap::CompactIfStale() {
  if (heap_.size() <= kCompactAbove || heap_.size() <= 2 * live_) return;
  std::erase_if(heap_, [this](const Entry& e) { return Stale(e); });
  std::make_heap(heap_.begin(), heap_.end(), Later);
}

}  // namespace stormark::controller
