#include "bench/fleet_sim/sim_service.h"

#include <time.h>

#include <random>

#include "bench/fleet_sim/run_stream.h"
#include "common/strings.h"
#include "common/version.h"
#include "fmt/format.h"

namespace stormark::fleet_sim {
namespace {

grpc::Status ToGrpc(const common::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

int64_t RealtimeNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// 128 bits as 32 hex digits, as a real agent's token looks; not secret, since it is not checked.
std::string NewToken() {
  thread_local std::mt19937_64 random(std::random_device{}());
  return fmt::format("{:016x}{:016x}", random(), random());
}

// Finishes a unary call with `status` at once.
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context, const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

}  // namespace

SimService::SimService(SimFleet& fleet, TimerQueue& timers, PhaseLog& log,
                       uint32_t series_interval_ms)
    : fleet_(fleet), timers_(timers), log_(log), shapes_(series_interval_ms) {}

SimAgent* SimService::AgentOf(grpc::CallbackServerContext* context, grpc::Status* status) {
  const grpc::string_ref authority = context->ExperimentalGetAuthority();
  const std::string_view named(authority.data(), authority.size());
  SimAgent* agent = fleet_.ForAuthority(named);
  if (agent == nullptr) {
    *status = grpc::Status(
        grpc::StatusCode::FAILED_PRECONDITION,
        common::StrCat("the fleet simulator serves no agent for :authority '", named,
                       "' (it finds the agent by the port its client's channel names)"));
  }
  return agent;
}

grpc::ServerUnaryReactor* SimService::GetInfo(grpc::CallbackServerContext* context,
                                              const stormark::v1::GetInfoRequest* request,
                                              stormark::v1::AgentInfo* reply) {
  grpc::Status status;
  SimAgent* agent = AgentOf(context, &status);
  if (agent == nullptr) return Answer(context, status);
  *reply = agent->Info();
  if (std::shared_ptr<const PhaseShape> held = agent->Held()) {
    reply->set_busy_with_phase(held->phase_id);
  }
  return Answer(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* SimService::SyncClock(grpc::CallbackServerContext* context,
                                                const stormark::v1::SyncClockRequest* request,
                                                stormark::v1::SyncClockReply* reply) {
  grpc::Status status;
  SimAgent* agent = AgentOf(context, &status);
  if (agent == nullptr) return Answer(context, status);
  reply->set_agent_receive_unix_nanos(agent->NowUnixNanos());
  reply->set_controller_send_unix_nanos(request->controller_send_unix_nanos());
  reply->set_agent_send_unix_nanos(agent->NowUnixNanos());
  return Answer(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* SimService::Prepare(grpc::CallbackServerContext* context,
                                              const stormark::v1::PrepareRequest* request,
                                              stormark::v1::PrepareReply* reply) {
  grpc::Status status;
  SimAgent* agent = AgentOf(context, &status);
  if (agent == nullptr) return Answer(context, status);
  common::Status compatible = common::CheckProtocolCompatible(
      common::OurProtocol(), "this agent", request->controller_protocol(), "the controller");
  if (!compatible.ok()) return Answer(context, ToGrpc(compatible));
  auto shape = shapes_.For(request->spec());
  if (!shape.ok()) return Answer(context, ToGrpc(shape.status()));
  agent->Hold(*shape);
  reply->set_prepared_unix_nanos(agent->NowUnixNanos());
  reply->set_phase_token(NewToken());
  log_.Prepared(request->spec().phase_id(), RealtimeNanos());
  return Answer(context, grpc::Status::OK);
}

grpc::ServerWriteReactor<stormark::v1::RunUpdate>* SimService::Run(
    grpc::CallbackServerContext* context, const stormark::v1::RunRequest* request) {
  grpc::Status status;
  SimAgent* agent = AgentOf(context, &status);
  if (agent == nullptr) return new RefusedRun(status);
  std::shared_ptr<const PhaseShape> held = agent->Held();
  if (!held || held->phase_id != request->phase_id()) {
    return new RefusedRun(grpc::Status(
        grpc::StatusCode::FAILED_PRECONDITION,
        common::StrCat("phase '", request->phase_id(), "' is not prepared on this agent")));
  }
  auto* stream =
      new RunStream(*agent, std::move(held),
                    request->await_start() ? 0 : request->start_at_unix_nanos(), timers_, log_);
  stream->Start();
  return stream;
}

grpc::ServerUnaryReactor* SimService::Start(grpc::CallbackServerContext* context,
                                            const stormark::v1::StartRequest* request,
                                            stormark::v1::StartReply* reply) {
  grpc::Status status;
  SimAgent* agent = AgentOf(context, &status);
  if (agent == nullptr) return Answer(context, status);
  reply->set_received_unix_nanos(agent->NowUnixNanos());
  std::shared_ptr<ArmedRun> armed = agent->Armed();
  bool started = false;
  if (armed) {
    absl::MutexLock lock(&armed->mu);
    started = armed->stream != nullptr && armed->stream->StartAt(request->start_at_unix_nanos());
  }
  if (!started) {
    return Answer(context, grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                        common::StrCat("phase '", request->phase_id(),
                                                       "' is not armed for a start")));
  }
  return Answer(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* SimService::Abort(grpc::CallbackServerContext* context,
                                            const stormark::v1::AbortRequest* request,
                                            stormark::v1::AbortReply* reply) {
  grpc::Status status;
  SimAgent* agent = AgentOf(context, &status);
  if (agent == nullptr) return Answer(context, status);
  reply->set_aborted(agent->Release(request->phase_id()));
  return Answer(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* SimService::Cleanup(grpc::CallbackServerContext* context,
                                              const stormark::v1::CleanupRequest* request,
                                              stormark::v1::CleanupReply* reply) {
  grpc::Status status;
  SimAgent* agent = AgentOf(context, &status);
  if (agent == nullptr) return Answer(context, status);
  agent->Release(request->phase_id());
  reply->set_removed(0);
  return Answer(context, grpc::Status::OK);
}

grpc::ServerUnaryReactor* SimService::Heartbeat(grpc::CallbackServerContext* context,
                                                const stormark::v1::HeartbeatRequest* request,
                                                stormark::v1::HeartbeatReply* reply) {
  grpc::Status status;
  SimAgent* agent = AgentOf(context, &status);
  if (agent == nullptr) return Answer(context, status);
  reply->set_now_unix_nanos(agent->NowUnixNanos());
  if (std::shared_ptr<const PhaseShape> held = agent->Held()) reply->set_phase_id(held->phase_id);
  return Answer(context, grpc::Status::OK);
}

}  // namespace stormark::fleet_sim
