// One thread that runs callbacks at wall-clock instants, earliest first, so that thousands of
// simulated Run streams can wait for their start and end without a thread each.
//
// Deadlines are CLOCK_REALTIME nanoseconds, as a RunRequest's start_at_unix_nanos is: the wait
// is a futex on the wall clock (abseil's CondVar deadline), which is what a start instant on
// the agent's own clock means. Callbacks run on the queue's thread, one after another, and
// should be quick: a burst of 10,000 due at one instant is run in deadline order, and each
// one's lateness is the sum of those before it.
//
// Thread-safe. Stop() (or the destructor) runs every callback still queued at once, without
// waiting for its deadline, so that whatever a callback owns is released.
#ifndef STORMARK_BENCH_FLEET_SIM_TIMER_QUEUE_H_
#define STORMARK_BENCH_FLEET_SIM_TIMER_QUEUE_H_

#include <cstdint>
#include <functional>
#include <queue>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace stormark::fleet_sim {

class TimerQueue {
 public:
  TimerQueue();
  ~TimerQueue();
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // Runs `fn` on the queue's thread once CLOCK_REALTIME reaches `unix_nanos` (at once when it
  // has passed). After Stop(), runs it on the calling thread instead.
  void At(int64_t unix_nanos, std::function<void()> fn) ABSL_LOCKS_EXCLUDED(mu_);

  // Runs what is still queued, now, and joins the thread. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    int64_t unix_nanos;
    uint64_t seq;  // Equal deadlines run in the order they were queued.
    std::function<void()> fn;
    bool operator>(const Entry& o) const {
      return unix_nanos != o.unix_nanos ? unix_nanos > o.unix_nanos : seq > o.seq;
    }
  };

  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex mu_;
  absl::CondVar changed_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> due_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace stormark::fleet_sim

#endif  // STORMARK_BENCH_FLEET_SIM_TIMER_QUEUE_H_
