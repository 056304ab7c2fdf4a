// One gRPC server for every simulated agent: N loopback ports chosen by the kernel, one
// callback service (sim_service.h), the timer queue the Run streams wait on, and the phase log.
//
// A single server binds every port: gRPC takes thousands of AddListeningPort calls (10,000
// bind in a few seconds), each port a listener on the same pollers, with no thread per port or
// per call. What limits one process is file descriptors: a listener and one connection per
// agent, which Start() checks against RLIMIT_NOFILE.
//
// Thread-safe after Start(). Shutdown() (or the destructor) ends every call.
#ifndef STORMARK_BENCH_FLEET_SIM_SIM_SERVER_H_
#define STORMARK_BENCH_FLEET_SIM_SIM_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "bench/fleet_sim/lies.h"
#include "bench/fleet_sim/phase_log.h"
#include "bench/fleet_sim/sim_fleet.h"
#include "bench/fleet_sim/sim_service.h"
#include "bench/fleet_sim/timer_queue.h"
#include "common/status.h"

namespace stormark::fleet_sim {

struct SimServerOptions {
  size_t agents = 1;
  // Agent i's clock runs clock_offsets_nanos[i] ahead; empty: all on this process's clock.
  std::vector<int64_t> clock_offsets_nanos;
  // Each interval of a result's series covers this many ms when the phase sets none (0: a
  // second, as an agent's): a short phase then sends as many samples as a long one would.
  uint32_t series_interval_ms = 0;
  // Agent `liar` tells `lie` (lies.h); Lie::kNone: every agent is honest.
  Lie lie = Lie::kNone;
  size_t liar = 0;
};

class SimServer {
 public:
  // Binds `options.agents` ports on 127.0.0.1 and serves them. UNAVAILABLE when gRPC cannot,
  // RESOURCE_EXHAUSTED when RLIMIT_NOFILE cannot hold even the listeners (the soft limit is
  // raised to the hard one first). `warning` is set when it holds the listeners but not a
  // connection to each.
  static common::StatusOr<std::unique_ptr<SimServer>> Start(const SimServerOptions& options,
                                                            std::string* warning);
  ~SimServer();

  // Agent i's port.
  const std::vector<int>& ports() const { return ports_; }
  const PhaseLog& log() const { return log_; }

  // Cancels every call still open, waiting at most `grace_nanos` for them, then releases the
  // Run streams still waiting on a timer. Idempotent.
  void Shutdown(int64_t grace_nanos);

 private:
  explicit SimServer(const SimServerOptions& options);

  // Declared in the order they are needed; destroyed in reverse, the server first.
  TimerQueue timers_;
  PhaseLog log_;
  SimFleet fleet_;
  SimService service_;
  std::vector<int> ports_;
  std::unique_ptr<grpc::Server> server_;
  bool shut_down_ = false;
};

}  // namespace stormark::fleet_sim

#endif  // STORMARK_BENCH_FLEET_SIM_SIM_SERVER_H_
