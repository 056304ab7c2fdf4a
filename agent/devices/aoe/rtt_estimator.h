// The retransmission timer of an AoE initiator: Jacobson and Karels' estimator (as TCP uses
// it, RFC 6298). Each round-trip sample updates a smoothed RTT and its mean deviation; the
// timeout is srtt + 4 * rttvar, kept within [min, max], and doubles with each retransmission
// of the same frame (exponential backoff), never beyond max. AoE needs no Karn's rule: each
// attempt carries its own tag, so every reply says which transmission it answers.
//
// Thread-safe: the queues of one device share it.
#ifndef STORMARK_AGENT_DEVICES_AOE_RTT_ESTIMATOR_H_
#define STORMARK_AGENT_DEVICES_AOE_RTT_ESTIMATOR_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace stormark::agent::aoe {

class RttEstimator {
 public:
  // Before any sample the timeout is `initial_nanos`.
  RttEstimator(int64_t initial_nanos, int64_t min_nanos, int64_t max_nanos);

  void Sample(int64_t rtt_nanos);
  // The timeout for the `attempt`-th transmission of a frame (1 for the first).
  int64_t Timeout(uint32_t attempt) const;

  // The current smoothed RTT and deviation (0 before any sample), and samples taken.
  int64_t srtt_nanos() const;
  int64_t rttvar_nanos() const;
  uint64_t samples() const;

 private:
  const int64_t initial_nanos_, min_nanos_, max_nanos_;
  mutable absl::Mutex mu_;
  int64_t srtt_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t rttvar_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t samples_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace stormark::agent::aoe

#endif  // STORMARK_AGENT_DEVICES_AOE_RTT_ESTIMATOR_H_
