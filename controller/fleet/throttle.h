// A bound on calls in flight: the fleet starts its hosts' calls from one thread, which waits
// for room before each, and the calls' callbacks (on gRPC's threads) give the room back. So
// ten thousand hosts never mean ten thousand TLS handshakes or Prepare requests at once, and no
// thread is held per call: a call in flight costs its context and buffers, not a stack.
#ifndef STORMARK_CONTROLLER_FLEET_THROTTLE_H_
#define STORMARK_CONTROLLER_FLEET_THROTTLE_H_

#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/monotonic_cond_var.h"

namespace stormark::controller {

// Thread-safe.
class Throttle {
 public:
  explicit Throttle(size_t limit) : limit_(limit) {}
  // Waits, when destroyed, until every call started has given its room back.
  ~Throttle() { WaitIdle(); }
  Throttle(const Throttle&) = delete;
  Throttle& operator=(const Throttle&) = delete;

  // Waits until fewer than `limit` calls are in flight, then counts one more.
  void Acquire() ABSL_LOCKS_EXCLUDED(mu_);
  // One call is over. May be called from any thread, also from within the call's start.
  void Release() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until no call is in flight.
  void WaitIdle() ABSL_LOCKS_EXCLUDED(mu_);

  // The most calls that were in flight at once.
  size_t peak() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const size_t limit_;
  mutable absl::Mutex mu_;
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  size_t peak_ ABSL_GUARDED_BY(mu_) = 0;
  common::MonotonicCondVar room_;  // Signalled when a call gives its room back.
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_THROTTLE_H_
