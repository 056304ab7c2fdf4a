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
};

// The offset from the sample with the smallest round trip: queueing delays only ever add to
// a round trip, so the fastest exchange is the most symmetric one. Requires samples.
ClockEstimate EstimateClock(const std::vector<ClockSample>& samples);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_CLOCK_SYNC_H_
