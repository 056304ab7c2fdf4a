// NTP-style clock offset estimation between the controller and one agent.
#ifndef STORMARK_CONTROLLER_FLEET_CLOCK_SYNC_H_
#define STORMARK_CONTROLLER_FLEET_CLOCK_SYNC_H_

#include <cstdint>
#include <vector>

namespace stormark::controller {

// One exchange, all in ns since the epoch: t0 controller send, t1 agent receive, t2 agent
// send, t3 controller receive.
struct ClockSample {
  int64_t t0 = 0;
  int64_t t1 = 0;
  int64_t t2 = 0;
  int64_t t3 = 0;
};

struct ClockEstimate {
  // agent clock - controller clock. Add it to a controller time to get the agent's time.
  int64_t offset_nanos = 0;
  // Network round trip of the sample used, without the agent's own time.
  int64_t rtt_nanos = 0;
  // The offset is known to within +-uncertainty_nanos (half the round trip).
  int64_t uncertainty_nanos = 0;
  // For a phase's estimate (BracketPhase): how far the offset moved between the sync before
  // the phase's Prepare and the one after its end, by drift or by a step of either clock.
  int64_t moved_nanos = 0;
};

// The offset from the sample with the smallest round trip: queueing delays only ever add to
// a round trip, so the fastest exchange is the most symmetric one. Requires samples.
ClockEstimate EstimateClock(const std::vector<ClockSample>& samples);

// The estimate in force for a phase, from the syncs `before` its Prepare and `after` its end:
// the offset of `before` (the one the start instant was sent with), known to within the larger
// uncertainty of the two plus however far the offset moved between them, since the start lies
// somewhere between the two syncs. So drift over a long Prepare, and an NTP step in mid-phase,
// both go into the stated uncertainty instead of passing unseen.
ClockEstimate BracketPhase(const ClockEstimate& before, const ClockEstimate& after);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_CLOCK_SYNC_H_
