// A condition variable for an absl::Mutex whose timed waits run on the monotonic clock.
//
// abseil 20220623's own timed waits (Mutex::AwaitWithTimeout, CondVar::WaitWithTimeout) turn
// the timeout into a wall-clock deadline (a futex wait with FUTEX_CLOCK_REALTIME): a clock
// stepped back by an hour (NTP at boot, `date -s`) would stretch a 20 ms poll or a 0.5 s
// heartbeat round to an hour. This one measures timeouts as std::condition_variable does.
//
// Thread-safe. Notify with or without the mutex held, after changing what the predicate reads
// under it.
#ifndef STORMARK_COMMON_MONOTONIC_COND_VAR_H_
#define STORMARK_COMMON_MONOTONIC_COND_VAR_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace stormark::common {

class MonotonicCondVar {
 public:
  // Until `done()` is true, releases `mu` and sleeps until notified (or woken spuriously),
  // then takes `mu` again. `done` is called with `mu` held: a lambda reading members guarded
  // by it says so with ABSL_EXCLUSIVE_LOCKS_REQUIRED.
  template <typename Predicate>
  void Wait(absl::Mutex& mu, Predicate done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Held held{mu};
    cv_.wait(held, done);
  }

  // The same, for at most `nanos` on the monotonic clock. Returns done(): false means timed out.
  template <typename Predicate>
  bool WaitFor(absl::Mutex& mu, int64_t nanos, Predicate done) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Held held{mu};
    return cv_.wait_for(held, std::chrono::nanoseconds(nanos), done);
  }

  void NotifyAll() { cv_.notify_all(); }

 private:
  // The caller's hold on the mutex, as the BasicLockable condition_variable_any releases while
  // it sleeps and takes back before it returns; the analysis cannot follow that hand-off.
  struct Held {
    void lock() ABSL_NO_THREAD_SAFETY_ANALYSIS { mu.Lock(); }
    void unlock() ABSL_NO_THREAD_SAFETY_ANALYSIS { mu.Unlock(); }
    absl::Mutex& mu;
  };

  std::condition_variable_any cv_;
};

}  // namespace stormark::common

#endif  // STORMARK_COMMON_MONOTONIC_COND_VAR_H_
