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

ClockEstimate BracketPhase(const ClockEstimate& before, const ClockEstimate& after) {
  ClockEstimate phase = before;
  phase.moved_nanos = after.offset_nanos - before.offset_nanos;
  phase.uncertainty_nanos = std::max(before.uncertainty_nanos, after.uncertainty_nanos) +
                            (phase.moved_nanos < 0 ? -phase.moved_nanos : phase.moved_nanos);
  return phase;
}

}  // namespace stormark::controller
