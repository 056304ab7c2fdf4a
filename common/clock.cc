#include "common/clock.h"

#include <time.h>

#include <algorithm>
#include <cerrno>

namespace stormark::common {
namespace {

int64_t ToNanos(const timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

timespec FromNanos(int64_t nanos) {
  timespec ts;
  ts.tv_sec = nanos / 1'000'000'000;
  ts.tv_nsec = nanos % 1'000'000'000;
  return ts;
}

class OsClock final : public Clock {
 public:
  int64_t NowUnixNanos() const override {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ToNanos(ts);
  }

  int64_t MonotonicNanos() const override {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ToNanos(ts);
  }

  bool SleepUntilUnixNanos(int64_t unix_nanos, int64_t max_wait_nanos) const override {
    const int64_t now = NowUnixNanos();
    const int64_t wake = std::min(unix_nanos, now + std::max<int64_t>(0, max_wait_nanos));
    const timespec ts = FromNanos(wake);
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
    return NowUnixNanos() >= unix_nanos;
  }
};

}  // namespace

const Clock& SystemClock() {
  static const OsClock clock;
  return clock;
}

}  // namespace stormark::common
