// When the controller's calls of each phase reached the simulator, on this process's
// CLOCK_REALTIME, which on one machine is the controller's clock too: the first and last
// Prepare answered (the controller's barrier ends just after the last), the first and last Run
// received, the start instant those asked for (less each agent's clock offset), how many Runs
// came after that instant, and how late the simulator's own timer woke the streams and got
// round to their results.
// bench/fleet_sim.py reads it (--stats-file) for the start lead and the Run fan-out, which the
// controller's JSON report does not hold.
//
// Thread-safe.
#ifndef STORMARK_BENCH_FLEET_SIM_PHASE_LOG_H_
#define STORMARK_BENCH_FLEET_SIM_PHASE_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace stormark::fleet_sim {

class PhaseLog {
 public:
  // A Prepare of `phase_id` was answered at `unix_nanos`.
  void Prepared(const std::string& phase_id, int64_t unix_nanos) ABSL_LOCKS_EXCLUDED(mu_);
  // A Run arrived at `unix_nanos`, asking to start at `start_at_nanos` (both this process's
  // clock).
  void RunReceived(const std::string& phase_id, int64_t unix_nanos, int64_t start_at_nanos)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A stream whose Run came in time was woken `timer_late_nanos` after its start instant.
  void Woken(const std::string& phase_id, int64_t timer_late_nanos) ABSL_LOCKS_EXCLUDED(mu_);
  // A stream's result was built `late_nanos` after its timed region ended.
  void Ended(const std::string& phase_id, int64_t late_nanos) ABSL_LOCKS_EXCLUDED(mu_);

  // Every phase in the order first seen, as a JSON array of objects; times in ns since the
  // epoch.
  std::string Json() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Phase {
    std::string phase_id;
    int64_t prepares = 0;
    int64_t first_prepare = 0, last_prepare = 0;
    int64_t runs = 0;
    int64_t first_run = 0, last_run = 0;
    int64_t start_at_min = 0, start_at_max = 0;
    int64_t runs_after_start = 0;
    int64_t woken = 0;
    int64_t timer_late_max = 0;
    int64_t timer_late_sum = 0;
    int64_t ended = 0;
    int64_t result_late_max = 0;
  };
  Phase& Find(const std::string& phase_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<Phase> phases_ ABSL_GUARDED_BY(mu_);  // A run has few: found by a scan.
};

}  // namespace stormark::fleet_sim

#endif  // STORMARK_BENCH_FLEET_SIM_PHASE_LOG_H_
