#include "controller/fleet/throttle.h"

#include <algorithm>

namespace stormark::controller {

void Throttle::Acquire() {
  absl::MutexLock lock(&mu_);
  room_.Wait(mu_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ < limit_; });
  ++in_flight_;
  peak_ = std::max(peak_, in_flight_);
}

void Throttle::Release() {
  absl::MutexLock lock(&mu_);
  --in_flight_;
  room_.NotifyAll();
}

void Throttle::WaitIdle() {
  absl::MutexLock lock(&mu_);
  room_.Wait(mu_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; });
}

size_t Throttle::peak() const {
  absl::MutexLock lock(&mu_);
  return peak_;
}

}  // namespace stormark::controller
