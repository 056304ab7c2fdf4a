// Heartbeats: how the controller notices, within a bounded time, that an agent stopped
// answering (process hung or stopped, host gone, network cut), also while a Run stream is
// open and no progress comes.
//
// One thread sends a Heartbeat to every watched agent each interval, without blocking (200
// agents cost 100 small calls a second at the default 2 s), and gives up a host when nothing
// was heard from it for the timeout: neither a heartbeat's answer nor progress on its open Run
// stream. Each host has its own schedule, spread over the interval and jittered, so that a
// large fleet is not asked in one burst. The schedules and the silences are timers
// (timer_heap.h): the thread wakes every 0.5 s (or each interval, if shorter), and a round
// touches only the hosts that are due. When the thread itself runs late (the
// controller stalled: stopped, swapping, starved of CPU), the time it was not looking does not
// count against any host. The same thread calls a tick function on every round, which the
// fleet uses to take the phase deadlines that are due from its own timers.
#ifndef STORMARK_CONTROLLER_FLEET_HEARTBEAT_MONITOR_H_
#define STORMARK_CONTROLLER_FLEET_HEARTBEAT_MONITOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/clock.h"
#include "common/monotonic_cond_var.h"
#include "controller/fleet/agent_client.h"
#include "controller/fleet/timer_heap.h"

namespace stormark::controller {

// When host `host` of `hosts` first gets a heartbeat, after the monitor starts: spread evenly
// over one interval.
int64_t FirstHeartbeatOffset(size_t host, size_t hosts, int64_t interval_nanos);

// A round of the monitor this much later than planned is the controller's own stall.
inline constexpr int64_t kStallAllowanceNanos = 1'000'000'000;

struct HeartbeatOptions {
  // How often each agent is asked.
  int64_t interval_nanos = 2'000'000'000;
  // A host none of whose heartbeats succeeded for this long is given up. Also the lease the
  // agent holds a phase on (PhaseSpec.heartbeat_timeout_ms).
  int64_t timeout_nanos = 10'000'000'000;
};

// Which hosts have been silent too long. Not thread-safe; the monitor guards it.
class HeartbeatTracker {
 public:
  HeartbeatTracker(size_t hosts, int64_t timeout_nanos);

  // Starts watching `host` as if it had just answered; Stop ends it.
  void Start(size_t host, int64_t now_nanos);
  void Stop(size_t host);
  bool watched(size_t host) const { return hosts_[host].watched; }

  // A heartbeat to `host` succeeded at `now_nanos` (or its Run stream delivered progress), or
  // failed with `error`.
  void Answered(size_t host, int64_t now_nanos);
  void Failed(size_t host, std::string error);

  // The controller was not looking for `lag_nanos` (its own stall): each watched host's
  // silence is shortened by that much, never past `now_nanos`.
  void Forgive(int64_t lag_nanos, int64_t now_nanos);

  // The watched hosts silent for the timeout or longer at `now_nanos`, each with the reason
  // ("no heartbeat from agent db1:7420 for 10.0 s (last error: ...)"), named by `names`.
  // They are no longer watched afterwards, so each is reported once.
  std::vector<std::pair<size_t, std::string>> TakeExpired(int64_t now_nanos,
                                                          const std::vector<std::string>& names);

 private:
  struct Host {
    bool watched = false;
    int64_t last_ok = 0;
    std::string last_error;
  };
  std::vector<Host> hosts_;
  const int64_t timeout_nanos_;
  TimerHeap silences_;  // When each watched host would have been silent for the timeout.
};

class HeartbeatMonitor {
 public:
  // Called from the monitor's thread for a host given up, with the reason.
  using LostFn = std::function<void(size_t host, const std::string& reason)>;
  // Called from the monitor's thread on every round (at most 0.5 s apart).
  using TickFn = std::function<void()>;

  // Starts the thread. `clients` and `clock` must outlive the monitor. No host is watched
  // until Watch().
  HeartbeatMonitor(std::vector<AgentClient*> clients, HeartbeatOptions options,
                   const common::Clock& clock, LostFn on_lost, TickFn on_tick);
  // Stops the thread and waits for the heartbeats in flight.
  ~HeartbeatMonitor();

  HeartbeatMonitor(const HeartbeatMonitor&) = delete;
  HeartbeatMonitor& operator=(const HeartbeatMonitor&) = delete;

  // Starts or stops watching `host`. Thread-safe.
  void Watch(size_t host, bool watch) ABSL_LOCKS_EXCLUDED(mu_);
  // The phase heartbeats to `host` name, renewing the agent's lease on it. Thread-safe.
  void SetPhase(size_t host, const std::string& phase_id) ABSL_LOCKS_EXCLUDED(mu_);
  // Something came from `host` (progress on its Run stream): it is alive. Thread-safe.
  void Heard(size_t host) ABSL_LOCKS_EXCLUDED(mu_);
  // How long, in all, the monitor's own rounds came late enough to suspend verdicts.
  int64_t stalled_nanos() const ABSL_LOCKS_EXCLUDED(mu_);

  const HeartbeatOptions& options() const { return options_; }

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  const std::vector<AgentClient*> clients_;
  std::vector<std::string> names_;
  const HeartbeatOptions options_;
  const common::Clock& clock_;
  const LostFn on_lost_;
  const TickFn on_tick_;

  mutable absl::Mutex mu_;
  common::MonotonicCondVar changed_;
  HeartbeatTracker tracker_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> phases_ ABSL_GUARDED_BY(mu_);
  std::vector<char> in_flight_ ABSL_GUARDED_BY(mu_);  // One heartbeat per host at a time.
  size_t calls_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t stalled_nanos_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_HEARTBEAT_MONITOR_H_
