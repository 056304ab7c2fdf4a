#include "agent/server.h"

#include <dirent.h>
#include <sys/stat.h>

#include <chrono>

#include "common/strings.h"
#include "common/address.h"
#include "common/spec_check.h"
#include "common/tls.h"

namespace stormark::agent {
namespace {

// Phase directories left by an agent that crashed or was killed cannot be told apart from
// another agent's live ones, so they are reported, never removed.
void WarnAboutLeftovers(const AgentConfig& config, const LogFn& log) {
  if (!log) return;
  for (const auto& target : config.targets) {
    DIR* dir = opendir(target.path.c_str());
    if (dir == nullptr) continue;
    std::string found;
    while (const dirent* entry = readdir(dir)) {
      const std::string_view name = entry->d_name;
      if (name.starts_with(".stormark-")) found += common::StrCat(found.empty() ? "" : ", ", name);
    }
    closedir(dir);
    if (!found.empty()) {
      log(common::StrCat("warning: target '", target.name, "' (", target.path,
                         ") holds files of earlier phases that were not cleaned up: ", found,
                         "; remove them by hand if no other agent uses this directory"));
    }
  }
}

}  // namespace

common::StatusOr<std::unique_ptr<AgentServer>> AgentServer::Start(AgentServerOptions options,
                                                                  const common::Clock& clock) {
  ASSIGN_OR_RETURN(std::string listen, common::NormalizeAddress(options.listen));
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  std::string security = "plain text";
  if (!options.config.tls.empty()) {
    if (listen.starts_with("unix:")) {
      return absl::InvalidArgumentError(
          common::StrCat("TLS is for network addresses; ", listen, " is a unix socket"));
    }
    const TlsConfig& tls = options.config.tls;
    ASSIGN_OR_RETURN(common::TlsPem pem, common::LoadTlsFiles({tls.ca, tls.cert, tls.key}, "tls"));
    if (!pem.warning.empty() && options.log) options.log(common::StrCat("warning: ", pem.warning));
    credentials = common::MutualTlsServerCredentials(pem);
    security = common::StrCat("mutual TLS as CN=", pem.common_name);
  } else if (!common::IsLoopbackAddress(listen) && !options.insecure) {
    return absl::PermissionDeniedError(common::StrCat(
        "refusing to listen on ", listen,
        " without TLS: anyone who reaches it could write to this host's disks. Give the "
        "config 'tls: {ca, cert, key}' (stormark certs), listen on loopback, or pass "
        "--insecure on a network you trust"));
  }
  std::unique_ptr<AgentServer> server(new AgentServer());
  server->log_ = options.log;
  server->security_ = security;
  WarnAboutLeftovers(options.config, options.log);
  server->runner_ = std::make_unique<PhaseRunner>(options.config, ReadHostFacts(), clock);
  server->service_ =
      std::make_unique<AgentService>(*server->runner_, clock, options.log, options.protocol);

  grpc::ServerBuilder builder;
  // Controllers ping every 10 s to notice a dead agent during long phases; accept that.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // And ping the controller: a Run stream to a controller cut off by the network breaks
  // within about 20 s, which aborts the phase (the heartbeat lease usually comes first).
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  // Requests are small; refuse oversized ones before parsing them.
  builder.SetMaxReceiveMessageSize(common::kMaxRequestBytes);
  builder.SetMaxSendMessageSize(common::kMaxReplyBytes);
  int port = 0;
  builder.AddListeningPort(listen, credentials, &port);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (!server->server_) {
    return absl::UnavailableError(common::StrCat(
        "cannot listen on ", listen, " (address in use, or not an address of this host?)"));
  }
  if (listen.starts_with("unix:")) {
    // Whoever can connect to the socket is the local operator (service.h IdentityOf): only
    // its owner may, whatever the umask was.
    const std::string path = listen.substr(5);
    if (chmod(path.c_str(), 0600) != 0) {
      return common::ErrnoError(common::StrCat("chmod 0600 ", path), errno);
    }
    server->address_ = listen;
  } else {
    server->address_ = common::StrCat(listen.substr(0, listen.rfind(':')), ":", port);
  }
  server->reaper_ = std::thread([s = server.get()] { s->ReapAbandonedPhases(); });
  return server;
}

void AgentServer::ReapAbandonedPhases() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) {
    lock.unlock();
    const std::string phase = runner_->ReclaimAbandoned();
    if (!phase.empty() && log_) {
      log_(common::StrCat("removed abandoned phase '", phase,
                          "': its controller stopped sending heartbeats, or neither ran nor "
                          "cleaned it up"));
    }
    lock.lock();
  }
}

AgentServer::~AgentServer() {
  Shutdown();
  Wait();
}

std::shared_ptr<grpc::Channel> AgentServer::InProcessChannel() {
  return server_->InProcessChannel(grpc::ChannelArguments());
}

// server_ is null when Start failed to listen; the half-built server is destroyed then.
void AgentServer::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_.notify_all();
  if (reaper_.joinable()) reaper_.join();
  if (runner_) runner_->Shutdown();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

void AgentServer::Wait() {
  if (server_) server_->Wait();
}

}  // namespace stormark::agent
