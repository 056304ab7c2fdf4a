// Timers keyed by a small integer (a host's index), earliest first, so that a fleet of ten
// thousand hosts finds the few whose heartbeat, silence or phase deadline is due without
// looking at the others.
//
// Each key has at most one timer. Set moves it, Cancel drops it; both are O(log n) and leave
// the old entry in the heap, where it is skipped when it comes up, and the heap is rebuilt
// once such stale entries outnumber the live ones, so its size stays within twice the keys.
// Not thread-safe.
#ifndef STORMARK_CONTROLLER_FLEET_TIMER_HEAP_H_
#define STORMARK_CONTROLLER_FLEET_TIMER_HEAP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace stormark::controller {

class TimerHeap {
 public:
  // Keys are 0 to keys - 1.
  explicit TimerHeap(size_t keys);

  // `key`'s timer goes off at `when` (any clock, as long as one heap uses one), replacing
  // the one it had.
  void Set(size_t key, int64_t when);
  void Cancel(size_t key);
  // When `key`'s timer goes off, or nullopt when it has none.
  std::optional<int64_t> when(size_t key) const;

  // The earliest timer, or nullopt when none is set.
  std::optional<int64_t> Next();
  // The keys whose timer is due at `now` (at or before it), earliest first; their timers
  // are dropped.
  std::vector<size_t> TakeDue(int64_t now);

  // Timers set, and entries held (set or stale): for tests.
  size_t live() const { return live_; }
  size_t entries() const { return heap_.size(); }

 private:
  struct Entry {
    int64_t when;
    size_t key;
    uint64_t generation;
  };
  static bool Later(const Entry& a, const Entry& b) { return a.when > b.when; }
  bool Stale(const Entry& e) const { return generation_[e.key] != e.generation || !armed_[e.key]; }
  // Drops stale entries from the top; after it, the top (if any) is live.
  void DropStaleTop();
  void CompactIfStale();

  std::vector<Entry> heap_;  // A min-heap on `when` (std::push_heap with Later).
  std::vector<uint64_t> generation_;
  std::vector<int64_t> when_;
  std::vector<char> armed_;
  size_t live_ = 0;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_TIMER_HEAP_H_
