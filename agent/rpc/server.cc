#include "agent/rpc/server.h"

#include <dirent.h>
#include <grpc/grpc_security_constants.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "common/strings.h"
#include "common/address.h"
#include "common/log_text.h"
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
    // The names come from disk, where anyone may have made them: escaped, and only the first
    // few listed.
    constexpr int kListed = 8;
    std::string found;
    int count = 0;
    while (const dirent* entry = readdir(dir)) {
      const std::string_view name = entry->d_name;
      if (!name.starts_with(".stormark-")) continue;
      if (++count <= kListed) {
        found += common::StrCat(found.empty() ? "" : ", ", common::LogSafe(name));
      }
    }
    closedir(dir);
    if (count > kListed) found += common::StrCat(" and ", count - kListed, " more");
    if (!found.empty()) {
      log(common::StrCat("warning: target '", target.name, "' (", target.path,
                         ") holds files of earlier phases that were not cleaned up: ", found,
                         "; remove them by hand if no other agent uses this directory"));
    }
  }
}

// One clear line when the port is taken, before gRPC tries (it would log its own lines).
// Binds as gRPC does (SO_REUSEADDR, no SO_REUSEPORT) and lets go at once; port 0 is always
// free.
common::Status CheckPortFree(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (port == "0") return absl::OkStatus();
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) {
    return absl::OkStatus();  // gRPC resolves it again and says what is wrong
  }
  int in_use = 0;
  for (const addrinfo* a = found; a != nullptr && in_use == 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 && errno == EADDRINUSE) in_use = 1;
    close(fd);
  }
  freeaddrinfo(found);
  if (in_use != 0) {
    return absl::UnavailableError(
        common::StrCat("cannot listen on ", listen,
                       ": the port is in use (another stormark-agent?); one port "
                       "serves one agent"));
  }
  return absl::OkStatus();
}

}  // namespace

common::StatusOr<std::unique_ptr<AgentServer>> AgentServer::Start(AgentServerOptions options,
                                                                  const common::Clock& clock) {
  ASSIGN_OR_RETURN(std::string listen, common::NormalizeAddress(options.listen));
  const bool unix_socket = listen.starts_with("unix:");
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  std::string security = "plain text, --insecure";
  if (!options.config.tls.empty()) {
    if (unix_socket) {
      return absl::InvalidArgumentError(
          common::StrCat("TLS is for network addresses; ", listen, " is a unix socket"));
    }
    const TlsConfig& tls = options.config.tls;
    ASSIGN_OR_RETURN(common::TlsPem pem, common::LoadTlsFiles({tls.ca, tls.cert, tls.key}, "tls"));
    if (!pem.warning.empty() && options.log) options.log(common::StrCat("warning: ", pem.warning));
    credentials = common::MutualTlsServerCredentials(pem);
    security = common::StrCat("mutual TLS as CN=", pem.common_name);
  } else if (!unix_socket && !options.insecure) {
    // Loopback too: every local user can reach a loopback port.
    return absl::PermissionDeniedError(common::StrCat(
        "refusing to listen on ", listen,
        " without TLS: in plain text every local user, and anyone who reaches the port, could "
        "write to this host's disks. Give the config 'tls: {ca, cert, key}' (stormark certs), "
        "listen on a unix socket (the default, ",
        kDefaultListen,
        "), or pass --insecure in a "
        "lab"));
  }
  std::unique_ptr<AgentServer> server(new AgentServer());
  server->log_ = options.log;
  if (unix_socket) {
    UnixListener::Options unix_options;
    unix_options.path = listen.substr(5);
    unix_options.access = options.config.access;
    unix_options.log = options.log;
    ASSIGN_OR_RETURN(server->listener_, UnixListener::Bind(std::move(unix_options), clock));
    security =
        common::StrCat("peer credentials checked, socket ", server->listener_->permissions());
  } else {
    RETURN_IF_ERROR(CheckPortFree(listen));
  }
  server->security_ = security;
  WarnAboutLeftovers(options.config, options.log);
  server->runner_ = std::make_unique<PhaseRunner>(options.config, ReadHostFacts(), clock);
  server->service_ = std::make_unique<AgentService>(
      *server->runner_, clock, options.log, options.protocol,
      [s = server.get()](const grpc::ServerContext& context) { return s->Identify(context); });

  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default, which lets a second agent bind the same port and
  // share its connections at random: one port, one agent.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
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
  // A unix socket's connections are accepted by listener_ and handed to the server.
  if (!unix_socket) builder.AddListeningPort(listen, credentials, &port);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (!server->server_) {
    return absl::UnavailableError(common::StrCat(
        "cannot listen on ", listen, " (address in use, or not an address of this host?)"));
  }
  if (unix_socket) {
    server->address_ = listen;
    RETURN_IF_ERROR(server->listener_->Serve(server->server_.get()));
  } else {
    server->address_ = common::StrCat(listen.substr(0, listen.rfind(':')), ":", port);
    if (options.config.tls.empty() && options.log) {
      options.log(common::StrCat(
          "warning: --insecure: plain text on ", server->address_,
          ": every local user, and anyone who can reach the port, can command this agent"));
    }
  }
  server->reaper_ = std::thread([s = server.get()] { s->ReapAbandonedPhases(); });
  return server;
}

PeerIdentity AgentServer::Identify(const grpc::ServerContext& context) const {
  const std::string peer = context.peer();
  // gRPC 1.51's in-process transport names its peer "unknown" and has no security connector,
  // where every network transport, plain text included, names its security type.
  const auto auth = context.auth_context();
  const bool in_process =
      peer.starts_with("inproc") ||
      (peer == "unknown" &&
       (!auth || auth->FindPropertyValues(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME).empty()));
  if (in_process) {
    PeerIdentity identity;
    identity.kind = PeerIdentity::Kind::kInProcess;
    return identity;
  }
  if (listener_) return listener_->Identify(peer);
  return TransportPeerOf(context.auth_context().get(), peer);
}

void AgentServer::ReapAbandonedPhases() {
  mu_.Lock();
  while (!stop_.WaitFor(mu_, 1'000'000'000,
                        [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; })) {
    mu_.Unlock();
    const std::string phase = runner_->ReclaimAbandoned();
    if (const std::string kept = runner_->ReclaimKept(); !kept.empty() && log_) log_(kept);
    if (!phase.empty() && log_) {
      log_(common::StrCat("removed abandoned phase '", common::LogSafe(phase),
                          "': its controller stopped sending heartbeats, or neither ran nor "
                          "cleaned it up"));
    }
    mu_.Lock();
  }
  mu_.Unlock();
}

AgentServer::~AgentServer() {
  Shutdown();
  Wait();
}

std::shared_ptr<grpc::Channel> AgentServer::InProcessChannel() {
  return server_->InProcessChannel(grpc::ChannelArguments());
}

// server_ is null when Start failed to listen; the half-built server is destroyed then.
std::string AgentServer::HeldPhase() const { return runner_->BusyWith(); }

void AgentServer::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_.NotifyAll();
  if (reaper_.joinable()) reaper_.join();
  // No new connection from here on; the socket file goes.
  if (listener_) listener_->Stop();
  if (runner_) runner_->Shutdown();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

void AgentServer::Wait() {
  if (server_) server_->Wait();
}

}  // namespace stormark::agent
