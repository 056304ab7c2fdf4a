#include "agent/workloads/timed_region.h"

namespace stormark::agent {

TimedRegion::TimedRegion(const common::Clock& clock, common::RecorderSet& recorders)
    : clock_(clock), recorders_(recorders) {
  span_.start_mono = recorders.start_mono_nanos();
  span_.start_unix = clock.NowUnixNanos();
  span_.cpu_start = common::ProcessCpuTimes();
}

bool TimedRegion::Restart() {
  absl::MutexLock lock(&mu_);
  const int64_t now = clock_.MonotonicNanos();
  if (closed_ || !recorders_.Rebase(now)) return false;
  span_.start_unix += now - span_.start_mono;
  span_.start_mono = now;
  span_.cpu_start = common::ProcessCpuTimes();
  return true;
}

void TimedRegion::Close() {
  absl::MutexLock lock(&mu_);
  if (closed_) return;
  closed_ = true;
  span_.end_mono = clock_.MonotonicNanos();
  span_.cpu_end = common::ProcessCpuTimes();
}

TimedRegion::Span TimedRegion::span() const {
  absl::MutexLock lock(&mu_);
  Span span = span_;
  if (!closed_) {
    span.end_mono = clock_.MonotonicNanos();
    span.cpu_end = common::ProcessCpuTimes();
  }
  return span;
}

int64_t TimedRegion::start_mono() const {
  absl::MutexLock lock(&mu_);
  return span_.start_mono;
}

}  // namespace stormark::agent
