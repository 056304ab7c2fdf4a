#include "agent/workloads/start_gate.h"

#include <sched.h>

namespace stormark::agent {
namespace {

// How often a run waiting for its instant looks at the cancel flag. An abort before the
// instant is answered by the phase runner at once; the run's thread only has to stop by
// the instant, and a fleet of agents on one machine each waking every few milliseconds
// would starve the controller's fan-out.
constexpr int64_t kCancelPollNanos = 200'000'000;

}  // namespace

void StartGate::Open(int64_t start_at_unix_nanos, std::function<void()> at_begin) {
  absl::MutexLock lock(&mu_);
  if (opened_ || called_off_) return;
  opened_ = true;
  start_at_ = start_at_unix_nanos;
  at_begin_ = std::move(at_begin);
  resolved_.NotifyAll();
}

void StartGate::CallOff() {
  absl::MutexLock lock(&mu_);
  if (opened_ || called_off_) return;
  called_off_ = true;
  resolved_.NotifyAll();
}

bool StartGate::AwaitStart() {
  int64_t start_at = 0;
  std::function<void()> at_begin;
  {
    absl::MutexLock lock(&mu_);
    ready_ = true;
    resolved_.NotifyAll();
    resolved_.Wait(mu_,
                   [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return opened_ || called_off_; });
    if (called_off_) return false;
    start_at = start_at_;
    at_begin = std::move(at_begin_);
  }
  while (!cancelled_.load(std::memory_order_relaxed) &&
         !clock_.SleepUntilUnixNanos(start_at, kCancelPollNanos)) {
  }
  if (cancelled_.load(std::memory_order_relaxed) || !region_.Restart()) return false;
  if (start_at > 0) {
    start_late_nanos_.store(region_.span().start_unix - start_at, std::memory_order_relaxed);
  }
  begun_.store(true, std::memory_order_release);
  // Every agent of a fleet on one machine wakes at this instant. Letting the others that
  // woke with this one open their regions before this one's first I/O keeps the last
  // start close to the first: measured with 1,000 processes on 2 cores, each then waking a
  // thread of its own (bench/wake_floor), a yield here took the p99 of their starts from
  // 24-28 ms to 8-10 ms. Alone on its machine, the thread goes on at once.
  sched_yield();
  if (at_begin) at_begin();
  return true;
}

void StartGate::RunEnded() {
  absl::MutexLock lock(&mu_);
  ended_ = true;
  resolved_.NotifyAll();
}

bool StartGate::AwaitReady(int64_t timeout_nanos) {
  absl::MutexLock lock(&mu_);
  return resolved_.WaitFor(
      mu_, timeout_nanos, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ready_ || ended_; });
}

bool StartGate::ready() const {
  absl::MutexLock lock(&mu_);
  return ready_;
}

}  // namespace stormark::agent
