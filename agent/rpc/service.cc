#include "agent/rpc/service.h"

#include <unistd.h>

#include "agent/host/environment.h"

#include "common/strings.h"
#include "agent/workloads/factory.h"
#include "agent/workloads/workload_registry.h"
#include "common/log_text.h"
#include "common/spec_check.h"
#include "common/version.h"

namespace stormark::agent {

using stormark::v1::PhaseResult;

grpc::Status ToGrpc(const common::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

AgentService::AgentService(PhaseRunner& runner, const common::Clock& clock, LogFn log,
                           stormark::v1::Version protocol, IdentifyFn identify)
    : runner_(runner),
      clock_(clock),
      log_(std::move(log)),
      protocol_(std::move(protocol)),
      identify_(std::move(identify)) {}

Identity AgentService::Caller(const grpc::ServerContext& context) const {
  return IdentityOf(identify_(context), geteuid());
}

void AgentService::Log(const Identity& caller, const std::string& line) const {
  // The caller as its transport proved it: a unix user, a certificate's name (an address
  // alone may be a NAT's), or only an address.
  if (log_) {
    // The line is cut before the peer is added: whatever the caller sent, it says who sent it.
    log_(common::StrCat(common::LogSafeLine(line), " [peer ", common::LogSafe(caller.Describe()),
                        "]"));
  }
}

std::string AgentService::HeldByOther(const std::string& phase_id, const Identity& caller) const {
  if (runner_.BusyWith() != phase_id) return "";
  const std::string owner = runner_.HeldBy();
  return owner.empty() || owner == caller.name
             ? ""
             : common::StrCat(" (held by ", common::LogSafe(owner), ")");
}

grpc::Status AgentService::GetInfo(grpc::ServerContext* context,
                                   const stormark::v1::GetInfoRequest* request,
                                   stormark::v1::AgentInfo* reply) {
  const HostFacts& host = runner_.host();
  reply->set_agent_version(std::string(common::kSoftwareVersion));
  *reply->mutable_protocol() = protocol_;
  reply->set_hostname(host.hostname);
  reply->set_kernel(host.kernel);
  reply->set_cpu_model(host.cpu_model);
  reply->set_cpu_count(host.cpu_count);
  reply->set_ram_bytes(host.ram_bytes);
  for (const auto& [key, value] : ReadHostEnvironment(host, runner_.paths())) {
    (*reply->mutable_environment())[key] = value;
  }
  for (const auto& target : runner_.config().targets) {
    *reply->add_targets() = ReadTargetFacts(target, runner_.paths());
  }
  reply->set_now_unix_nanos(clock_.NowUnixNanos());
  reply->set_busy_with_phase(runner_.BusyWith());
  for (const std::string& workload : KnownWorkloads()) reply->add_workloads(workload);
  if (request->has_controller_protocol()) {
    common::Status compatible = common::CheckProtocolCompatible(
        protocol_, "this agent", request->controller_protocol(), "the controller");
    if (!compatible.ok()) {
      Log(Caller(*context), common::StrCat("warning: ", compatible.message()));
    }
  }
  return grpc::Status::OK;
}

grpc::Status AgentService::SyncClock(grpc::ServerContext* context,
                                     const stormark::v1::SyncClockRequest* request,
                                     stormark::v1::SyncClockReply* reply) {
  reply->set_agent_receive_unix_nanos(clock_.NowUnixNanos());
  reply->set_controller_send_unix_nanos(request->controller_send_unix_nanos());
  reply->set_agent_send_unix_nanos(clock_.NowUnixNanos());
  return grpc::Status::OK;
}

grpc::Status AgentService::Prepare(grpc::ServerContext* context,
                                   const stormark::v1::PrepareRequest* request,
                                   stormark::v1::PrepareReply* reply) {
  const Identity caller = Caller(*context);
  common::Status compatible = common::CheckProtocolCompatible(
      protocol_, "this agent", request->controller_protocol(), "the controller");
  if (compatible.ok() && request->controller_protocol().minor() < common::kPhaseTokenMinor) {
    compatible = absl::FailedPreconditionError(common::StrCat(
        "the controller speaks protocol ", common::FormatVersion(request->controller_protocol()),
        ", which has no phase tokens; this agent needs ", protocol_.major(), ".",
        common::kPhaseTokenMinor, " or later: upgrade the controller"));
  }
  if (!compatible.ok()) {
    Log(caller, common::StrCat("refused prepare: ", compatible.message()));
    return ToGrpc(compatible);
  }
  const auto& spec = request->spec();
  const common::Status named = common::CheckName("phase id", spec.phase_id());
  auto prepared = named.ok()
                      ? runner_.Prepare(spec, caller, [context] { return context->IsCancelled(); })
                      : common::StatusOr<stormark::v1::PrepareReply>(named);
  if (!prepared.ok()) {
    Log(caller, common::StrCat("refused prepare of phase '", common::LogSafe(spec.phase_id()),
                               "' on target '", common::LogSafe(spec.target()),
                               "': ", prepared.status().message()));
    return ToGrpc(prepared.status());
  }
  Log(caller, common::StrCat("prepared phase '", common::LogSafe(spec.phase_id()), "' on target '",
                             common::LogSafe(spec.target()), "'"));
  *reply = std::move(*prepared);
  return grpc::Status::OK;
}

grpc::Status AgentService::Run(grpc::ServerContext* context,
                               const stormark::v1::RunRequest* request,
                               grpc::ServerWriter<stormark::v1::RunUpdate>* writer) {
  const Identity caller = Caller(*context);
  auto progress = [&](const stormark::v1::RunUpdate::Progress& p) {
    stormark::v1::RunUpdate update;
    *update.mutable_progress() = p;
    return writer->Write(update);
  };
  auto gone = [&] { return context->IsCancelled(); };
  auto armed = [&] {
    stormark::v1::RunUpdate update;
    update.mutable_armed()->set_armed_unix_nanos(clock_.NowUnixNanos());
    return writer->Write(update);
  };
  if (common::Status named = common::CheckName("phase id", request->phase_id()); !named.ok()) {
    Log(caller, common::StrCat("refused run: ", named.message()));
    return ToGrpc(named);
  }
  const std::string held_by = HeldByOther(request->phase_id(), caller);
  Log(caller, common::StrCat("run phase '", request->phase_id(), "'",
                             request->await_start() ? ", armed for its start" : ""));
  auto result = runner_.Run(*request, caller, progress, gone, armed);
  if (!result.ok()) {
    Log(caller, common::StrCat("refused run of phase '", request->phase_id(), "'", held_by, ": ",
                               result.status().message()));
    return ToGrpc(result.status());
  }
  Log(caller,
      common::StrCat("phase '", request->phase_id(), "' ", PhaseResult::State_Name(result->state()),
                     result->error().empty() ? "" : ": ", result->error()));
  stormark::v1::RunUpdate update;
  *update.mutable_result() = std::move(*result);
  writer->Write(update);
  return grpc::Status::OK;
}

grpc::Status AgentService::Start(grpc::ServerContext* context,
                                 const stormark::v1::StartRequest* request,
                                 stormark::v1::StartReply* reply) {
  const Identity caller = Caller(*context);
  const int64_t received = clock_.NowUnixNanos();
  if (common::Status named = common::CheckName("phase id", request->phase_id()); !named.ok()) {
    Log(caller, common::StrCat("refused start: ", named.message()));
    return ToGrpc(named);
  }
  const common::Status started = runner_.Start(request->phase_id(), request->phase_token(), caller,
                                               request->start_at_unix_nanos());
  if (!started.ok()) {
    Log(caller, common::StrCat("refused start of phase '", request->phase_id(), "'",
                               HeldByOther(request->phase_id(), caller), ": ", started.message()));
    return ToGrpc(started);
  }
  reply->set_received_unix_nanos(received);
  return grpc::Status::OK;
}

grpc::Status AgentService::Abort(grpc::ServerContext* context,
                                 const stormark::v1::AbortRequest* request,
                                 stormark::v1::AbortReply* reply) {
  const Identity caller = Caller(*context);
  // There is no wildcard: the runner refuses an empty id, naming the operator's way out.
  if (!request->phase_id().empty()) {
    if (common::Status named = common::CheckName("phase id", request->phase_id()); !named.ok()) {
      Log(caller, common::StrCat("refused abort: ", named.message()));
      return ToGrpc(named);
    }
  }
  const std::string held_by = HeldByOther(request->phase_id(), caller);
  auto aborted = runner_.Abort(request->phase_id(), request->phase_token(), caller);
  if (!aborted.ok()) {
    Log(caller, common::StrCat("refused abort of phase '", request->phase_id(), "'", held_by, ": ",
                               aborted.status().message()));
    return ToGrpc(aborted.status());
  }
  reply->set_aborted(*aborted);
  Log(caller, *aborted ? common::StrCat("aborted phase '", request->phase_id(), "'")
                       : common::StrCat("abort of phase '", request->phase_id(),
                                        "': not held, nothing to do"));
  return grpc::Status::OK;
}

grpc::Status AgentService::Cleanup(grpc::ServerContext* context,
                                   const stormark::v1::CleanupRequest* request,
                                   stormark::v1::CleanupReply* reply) {
  const Identity caller = Caller(*context);
  if (common::Status named = common::CheckName("phase id", request->phase_id()); !named.ok()) {
    Log(caller, common::StrCat("refused cleanup: ", named.message()));
    return ToGrpc(named);
  }
  const std::string held_by = HeldByOther(request->phase_id(), caller);
  auto removed = runner_.Cleanup(request->phase_id(), request->phase_token(), caller);
  if (!removed.ok()) {
    Log(caller, common::StrCat("refused cleanup of phase '", request->phase_id(), "'", held_by,
                               ": ", removed.status().message()));
    return ToGrpc(removed.status());
  }
  reply->set_removed(static_cast<uint32_t>(removed->removed));
  for (const std::string& left : removed->left) reply->add_left(left);
  Log(caller, common::StrCat("cleaned up phase '", request->phase_id(), "' (", removed->removed,
                             " files and directories removed)"));
  if (!removed->left.empty()) {
    Log(caller,
        common::StrCat("cleanup of phase '", request->phase_id(), "' left ", removed->left.size(),
                       " entries: ", common::LogSafe(removed->left.front()),
                       removed->left.size() > 1 ? " (and more)" : ""));
  }
  return grpc::Status::OK;
}

grpc::Status AgentService::Heartbeat(grpc::ServerContext* context,
                                     const stormark::v1::HeartbeatRequest* request,
                                     stormark::v1::HeartbeatReply* reply) {
  // An empty id is a heartbeat between phases. A bad one is refused, not logged: a broken
  // controller sends one every few seconds.
  if (!request->phase_id().empty()) {
    if (common::Status named = common::CheckName("phase id", request->phase_id()); !named.ok()) {
      return ToGrpc(named);
    }
  }
  const Identity caller = Caller(*context);
  auto held = runner_.Heartbeat(request->phase_id(), request->phase_token(), caller);
  if (!held.ok()) {
    Log(caller,
        common::StrCat("refused heartbeat for phase '", request->phase_id(), "'",
                       HeldByOther(request->phase_id(), caller), ": ", held.status().message()));
    return ToGrpc(held.status());
  }
  reply->set_now_unix_nanos(clock_.NowUnixNanos());
  reply->set_phase_id(*held);
  reply->set_stuck_worker(runner_.StuckWorker());
  return grpc::Status::OK;
}

grpc::Status AgentService::AbortHeldPhase(grpc::ServerContext* context,
                                          const stormark::v1::AbortHeldPhaseRequest* request,
                                          stormark::v1::AbortHeldPhaseReply* reply) {
  const Identity caller = Caller(*context);
  if (!caller.local_operator) {
    const common::Status refused = absl::PermissionDeniedError(
        common::StrCat(caller.name,
                       " may not abort the held phase: only the local operator may (root or the "
                       "agent's own user, on its unix socket: stormark-agent --abort-held-phase)"));
    Log(caller, common::StrCat("refused forced abort: ", refused.message()));
    return ToGrpc(refused);
  }
  const std::string why = request->reason().empty() ? "" : common::StrCat(": ", request->reason());
  const PhaseRunner::ForcedAbort done =
      runner_.AbortHeldPhase(common::StrCat("aborted by the local operator", why));
  reply->set_phase_id(done.phase_id);
  reply->set_stuck_worker(done.stuck_worker);
  if (done.phase_id.empty()) {
    Log(caller, common::StrCat("forced abort", why, ": no phase held"));
  } else {
    Log(caller, common::StrCat("forced abort of phase '", done.phase_id, "' (held by ", done.owner,
                               ")", why,
                               done.stuck_worker.empty()
                                   ? ""
                                   : common::StrCat("; a worker is stuck in ", done.stuck_worker)));
  }
  return grpc::Status::OK;
}

}  // namespace stormark::agent
