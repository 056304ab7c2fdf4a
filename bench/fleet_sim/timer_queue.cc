#include "bench/fleet_sim/timer_queue.h"

#include <time.h>

#include "absl/time/time.h"

namespace stormark::fleet_sim {
namespace {

int64_t RealtimeNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

TimerQueue::TimerQueue() : thread_([this] { Loop(); }) {}

TimerQueue::~TimerQueue() { Stop(); }

void TimerQueue::At(int64_t unix_nanos, std::function<void()> fn) {
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      const bool earliest = due_.empty() || unix_nanos < due_.top().unix_nanos;
      due_.push(Entry{unix_nanos, next_seq_++, std::move(fn)});
      if (earliest) changed_.Signal();
      return;
    }
  }
  fn();
}

void TimerQueue::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    changed_.Signal();
  }
  thread_.join();
}

void TimerQueue::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    if (due_.empty()) {
      if (stopping_) return;
      changed_.Wait(&mu_);
      continue;
    }
    const int64_t deadline = due_.top().unix_nanos;
    if (!stopping_ && RealtimeNanos() < deadline) {
      changed_.WaitWithDeadline(&mu_, absl::FromUnixNanos(deadline));
      continue;
    }
    // priority_queue::top() is const: the callback is copied out, not moved.
    std::function<void()> fn = due_.top().fn;
    due_.pop();
    mu_.Unlock();
    fn();
    mu_.Lock();
  }
}

}  // namespace stormark::fleet_sim
