#include "controller/fleet/clock_sync.h"

#include <algorithm>

namespace stormark::controller {

ClockEstimate EstimateClock(const std::vector<ClockSample>& samples) {
  ClockEstimate best;
  bool found = false;
  for (const ClockSample& s : samples) {
    const int64_t rtt = std::max<int64_t>(0, (s.t3 - s.t0) - (s.t2 - s.t1));
    if (found && rtt >= best.rtt_nanos) continue;
    found = true;
    best.rtt_nanos = rtt;
    best.offset_nanos = ((s.t1 - s.t0) + (s.t2 - s.t3)) / 2;
    best.uncertainty_nanos = rtt / 2;
  }
  return best;
}

}  // namespace stormark::controller
