// The start of a Run's timed region at the fleet's common instant. The instant becomes known
// when the controller's Start reaches the agent (or with its Run, from an older controller);
// the run's own thread waits for it here, so that at the instant it is the one thread of the
// agent that wakes, and its first act is to open the timed region.
//
// Thread-safe: the phase runner opens or calls off the gate; the run's thread waits on it.
#ifndef STORMARK_AGENT_WORKLOADS_START_GATE_H_
#define STORMARK_AGENT_WORKLOADS_START_GATE_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/workloads/timed_region.h"
#include "common/clock.h"
#include "common/monotonic_cond_var.h"

namespace stormark::agent {

class StartGate {
 public:
  // `clock`, `region` and `cancelled` must outlive the gate.
  StartGate(const common::Clock& clock, TimedRegion& region, const std::atomic<bool>& cancelled)
      : clock_(clock), region_(region), cancelled_(cancelled) {}

  // The phase runner: the run begins at `start_at_unix_nanos` (0: at once, and then it is
  // not late), and `at_begin` (if any)
  // is called on the run's thread as its region opens, before its first I/O. Only the first
  // call of Open or CallOff counts.
  void Open(int64_t start_at_unix_nanos, std::function<void()> at_begin = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The phase runner: the run will not begin (an abort, a caller gone).
  void CallOff() ABSL_LOCKS_EXCLUDED(mu_);

  // The run's thread: waits for the instant, opens the timed region there and returns true;
  // false, with no region opened, when the gate was called off or the phase cancelled before
  // the instant. Then the run does no I/O. Called at most once.
  bool AwaitStart() ABSL_LOCKS_EXCLUDED(mu_);

  // The run's thread, as the run returns: wakes AwaitReady when the run ended before it
  // reached AwaitStart (it could not start its own threads, or it failed before).
  void RunEnded() ABSL_LOCKS_EXCLUDED(mu_);
  // The phase runner: waits up to `timeout_nanos` for the run to be ready for the instant
  // (its thread waits in AwaitStart; a workload that StartsItself calls it once its own
  // threads exist and wait for it) or to end before it was; returns whether one of them
  // happened, and ready() says which.
  bool AwaitReady(int64_t timeout_nanos) ABSL_LOCKS_EXCLUDED(mu_);
  bool ready() const ABSL_LOCKS_EXCLUDED(mu_);

  // Whether the region was opened at the instant; once true, start_late_nanos() holds how
  // long after the instant (on this agent's clock) it was.
  bool begun() const { return begun_.load(std::memory_order_acquire); }
  int64_t start_late_nanos() const { return start_late_nanos_.load(std::memory_order_relaxed); }

 private:
  const common::Clock& clock_;
  TimedRegion& region_;
  const std::atomic<bool>& cancelled_;
  mutable absl::Mutex mu_;
  common::MonotonicCondVar resolved_;
  bool opened_ ABSL_GUARDED_BY(mu_) = false;
  int64_t start_at_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void()> at_begin_ ABSL_GUARDED_BY(mu_);
  bool called_off_ ABSL_GUARDED_BY(mu_) = false;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;  // The run's thread reached AwaitStart.
  bool ended_ ABSL_GUARDED_BY(mu_) = false;  // The run returned.
  std::atomic<int64_t> start_late_nanos_{0};
  std::atomic<bool> begun_{false};
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_START_GATE_H_
