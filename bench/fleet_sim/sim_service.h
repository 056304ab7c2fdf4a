// The Agent service of every simulated agent at once, on gRPC's callback API: unary calls are
// answered in their handler, a Run is a RunStream on the shared timer queue (an armed one
// waits for its Start). The agent a call
// is for is found by the call's :authority (sim_fleet.h).
//
// GetInfo, SyncClock and Heartbeat answer on the agent's clock (this process's CLOCK_REALTIME
// plus its offset). Prepare validates the spec as far as the simulator can play it (randio on
// the target "sink"), holds the phase and returns a random token; tokens and identities are
// never checked. Abort and Cleanup answer at once and let the phase go. AbortHeldPhase is not
// served (UNIMPLEMENTED): it is for a local operator.
//
// Thread-safe; `fleet`, `timers` and `log` outlive the service.
#ifndef STORMARK_BENCH_FLEET_SIM_SIM_SERVICE_H_
#define STORMARK_BENCH_FLEET_SIM_SIM_SERVICE_H_

#include <cstdint>

#include <grpcpp/grpcpp.h>

#include "bench/fleet_sim/phase_log.h"
#include "bench/fleet_sim/phase_shape.h"
#include "bench/fleet_sim/sim_fleet.h"
#include "bench/fleet_sim/timer_queue.h"
#include "stormark/v1/agent.grpc.pb.h"

namespace stormark::fleet_sim {

class SimService final : public stormark::v1::Agent::CallbackService {
 public:
  // `series_interval_ms`: PhaseShapes'.
  SimService(SimFleet& fleet, TimerQueue& timers, PhaseLog& log, uint32_t series_interval_ms = 0);

  grpc::ServerUnaryReactor* GetInfo(grpc::CallbackServerContext* context,
                                    const stormark::v1::GetInfoRequest* request,
                                    stormark::v1::AgentInfo* reply) override;
  grpc::ServerUnaryReactor* SyncClock(grpc::CallbackServerContext* context,
                                      const stormark::v1::SyncClockRequest* request,
                                      stormark::v1::SyncClockReply* reply) override;
  grpc::ServerUnaryReactor* Prepare(grpc::CallbackServerContext* context,
                                    const stormark::v1::PrepareRequest* request,
                                    stormark::v1::PrepareReply* reply) override;
  grpc::ServerWriteReactor<stormark::v1::RunUpdate>* Run(
      grpc::CallbackServerContext* context, const stormark::v1::RunRequest* request) override;
  grpc::ServerUnaryReactor* Start(grpc::CallbackServerContext* context,
                                  const stormark::v1::StartRequest* request,
                                  stormark::v1::StartReply* reply) override;
  grpc::ServerUnaryReactor* Abort(grpc::CallbackServerContext* context,
                                  const stormark::v1::AbortRequest* request,
                                  stormark::v1::AbortReply* reply) override;
  grpc::ServerUnaryReactor* Cleanup(grpc::CallbackServerContext* context,
                                    const stormark::v1::CleanupRequest* request,
                                    stormark::v1::CleanupReply* reply) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const stormark::v1::HeartbeatRequest* request,
                                      stormark::v1::HeartbeatReply* reply) override;

 private:
  // The agent the call is for, or nullptr (then `status` says why).
  SimAgent* AgentOf(grpc::CallbackServerContext* context, grpc::Status* status);

  SimFleet& fleet_;
  TimerQueue& timers_;
  PhaseLog& log_;
  PhaseShapes shapes_;
};

}  // namespace stormark::fleet_sim

#endif  // STORMARK_BENCH_FLEET_SIM_SIM_SERVICE_H_
