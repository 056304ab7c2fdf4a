#include "agent/devices/aoe/rtt_estimator.h"

#include <algorithm>
#include <cstdlib>

namespace stormark::agent::aoe {

RttEstimator::RttEstimator(int64_t initial_nanos, int64_t min_nanos, int64_t max_nanos)
    : initial_nanos_(initial_nanos), min_nanos_(min_nanos), max_nanos_(max_nanos) {}

void RttEstimator::Sample(int64_t rtt_nanos) {
  rtt_nanos = std::max<int64_t>(rtt_nanos, 1);
  absl::MutexLock lock(&mu_);
  if (samples_++ == 0) {
    srtt_ = rtt_nanos;
    rttvar_ = rtt_nanos / 2;
    return;
  }
  // rttvar = 3/4 rttvar + 1/4 |srtt - rtt|; srtt = 7/8 srtt + 1/8 rtt.
  rttvar_ += (std::llabs(srtt_ - rtt_nanos) - rttvar_) / 4;
  srtt_ += (rtt_nanos - srtt_) / 8;
}

int64_t RttEstimator::Timeout(uint32_t attempt) const {
  int64_t base;
  {
    absl::MutexLock lock(&mu_);
    base = samples_ == 0 ? initial_nanos_ : srtt_ + 4 * rttvar_;
  }
  base = std::clamp(base, min_nanos_, max_nanos_);
  for (uint32_t i = 1; i < attempt && base < max_nanos_; ++i) base *= 2;
  return std::min(base, max_nanos_);
}

int64_t RttEstimator::srtt_nanos() const {
  absl::MutexLock lock(&mu_);
  return srtt_;
}

int64_t RttEstimator::rttvar_nanos() const {
  absl::MutexLock lock(&mu_);
  return rttvar_;
}

uint64_t RttEstimator::samples() const {
  absl::MutexLock lock(&mu_);
  return samples_;
}

}  // namespace stormark::agent::aoe
