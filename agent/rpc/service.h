// The gRPC face of the agent: translates the stormark.v1.Agent RPCs into PhaseRunner calls
// and absl::Status into grpc::Status. Holds no state of its own beyond the runner.
//
// Every call that acts on a phase (Prepare, Run, Abort, Cleanup, AbortHeldPhase) is logged
// with the caller's identity, refusals included; so are refused heartbeats.
//
// Thread-safe: gRPC calls the handlers from its thread pool.
#ifndef STORMARK_AGENT_RPC_SERVICE_H_
#define STORMARK_AGENT_RPC_SERVICE_H_

#include <functional>
#include <string>

#include "agent/access/authz.h"
#include "agent/access/peer_identity.h"
#include "agent/runner/phase_runner.h"
#include "common/clock.h"
#include "stormark/v1/agent.grpc.pb.h"

namespace stormark::agent {

// Where the service writes one line per notable event (prepare, run, refusal, abort).
using LogFn = std::function<void(const std::string&)>;

class AgentService final : public stormark::v1::Agent::Service {
 public:
  // `runner` and `clock` must outlive the service. `protocol` is the version this agent
  // claims; tests pass another to exercise the compatibility check. `identify` tells who
  // is calling (the server knows its transports); every log line names that caller.
  AgentService(PhaseRunner& runner, const common::Clock& clock, LogFn log,
               stormark::v1::Version protocol, IdentifyFn identify);

  grpc::Status GetInfo(grpc::ServerContext* context, const stormark::v1::GetInfoRequest* request,
                       stormark::v1::AgentInfo* reply) override;
  grpc::Status SyncClock(grpc::ServerContext* context,
                         const stormark::v1::SyncClockRequest* request,
                         stormark::v1::SyncClockReply* reply) override;
  grpc::Status Prepare(grpc::ServerContext* context, const stormark::v1::PrepareRequest* request,
                       stormark::v1::PrepareReply* reply) override;
  grpc::Status Run(grpc::ServerContext* context, const stormark::v1::RunRequest* request,
                   grpc::ServerWriter<stormark::v1::RunUpdate>* writer) override;
  grpc::Status Start(grpc::ServerContext* context, const stormark::v1::StartRequest* request,
                     stormark::v1::StartReply* reply) override;
  grpc::Status Abort(grpc::ServerContext* context, const stormark::v1::AbortRequest* request,
                     stormark::v1::AbortReply* reply) override;
  grpc::Status Cleanup(grpc::ServerContext* context, const stormark::v1::CleanupRequest* request,
                       stormark::v1::CleanupReply* reply) override;
  grpc::Status Heartbeat(grpc::ServerContext* context,
                         const stormark::v1::HeartbeatRequest* request,
                         stormark::v1::HeartbeatReply* reply) override;
  grpc::Status AbortHeldPhase(grpc::ServerContext* context,
                              const stormark::v1::AbortHeldPhaseRequest* request,
                              stormark::v1::AbortHeldPhaseReply* reply) override;

 private:
  // The caller of this call, as authz.h and phase ownership see it.
  Identity Caller(const grpc::ServerContext& context) const;
  void Log(const Identity& caller, const std::string& line) const;
  // " (held by CN=x)" when the held phase is `phase_id` and belongs to someone else than
  // `caller`, for the log.
  std::string HeldByOther(const std::string& phase_id, const Identity& caller) const;

  PhaseRunner& runner_;
  const common::Clock& clock_;
  const LogFn log_;
  const stormark::v1::Version protocol_;
  const IdentifyFn identify_;
};

// absl::Status -> grpc::Status with the same code and message.
grpc::Status ToGrpc(const common::Status& status);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RPC_SERVICE_H_
