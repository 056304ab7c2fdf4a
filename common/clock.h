// Time sources. Wall-clock time (ns since the Unix epoch) places events across hosts;
// monotonic time measures durations. Both come through Clock so tests can substitute them.
#ifndef STORMARK_COMMON_CLOCK_H_
#define STORMARK_COMMON_CLOCK_H_

#include <cstdint>

namespace stormark::common {

class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds since the Unix epoch (CLOCK_REALTIME). Thread-safe.
  virtual int64_t NowUnixNanos() const = 0;
  // Nanoseconds on a clock that never jumps (CLOCK_MONOTONIC). Thread-safe.
  virtual int64_t MonotonicNanos() const = 0;
  // Blocks until NowUnixNanos() >= unix_nanos, or at most max_wait_nanos. Returns true if the
  // deadline was reached. Precise to tens of microseconds on an idle system.
  virtual bool SleepUntilUnixNanos(int64_t unix_nanos, int64_t max_wait_nanos) const = 0;
};

// The operating system's clocks. The returned object is stateless and lives forever.
const Clock& SystemClock();

}  // namespace stormark::common

#endif  // STORMARK_COMMON_CLOCK_H_
