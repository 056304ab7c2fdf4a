// A running agent: the gRPC server, the service and the phase slot, wired together.
#ifndef STORMARK_AGENT_RPC_SERVER_H_
#define STORMARK_AGENT_RPC_SERVER_H_

#include <memory>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/config/config.h"
#include "agent/runner/phase_runner.h"
#include "agent/rpc/service.h"
#include "agent/rpc/unix_listener.h"
#include "common/clock.h"
#include "common/monotonic_cond_var.h"
#include "common/status.h"

namespace stormark::agent {

// Where an agent listens when not told: a unix socket only root and the socket's group reach.
inline constexpr char kDefaultListen[] = "unix:/run/stormark/agent.sock";

struct AgentServerOptions {
  // "unix:/path", "HOST:PORT" or "[V6]:PORT". Port 0 picks a free port (see
  // AgentServer::address()).
  std::string listen = kDefaultListen;
  // Allow plain text on TCP (loopback included): then anyone who reaches the port may
  // command the agent. A unix socket checks its peers' credentials either way.
  bool insecure = false;
  // The agent's config; its `tls` files, when given, make the server require mutual TLS.
  // Its `access` says who, besides root and the agent's user, may use the unix socket.
  AgentConfig config;
  LogFn log;
  stormark::v1::Version protocol;
};

class AgentServer {
 public:
  // Starts listening. `clock` must outlive the server. Refuses TCP without TLS unless
  // `insecure`; refuses a port or socket another agent holds (FAILED_PRECONDITION or
  // UNAVAILABLE, one line). Its peers are identified as agent/access/peer_identity.h says.
  static common::StatusOr<std::unique_ptr<AgentServer>> Start(AgentServerOptions options,
                                                              const common::Clock& clock);
  ~AgentServer();

  // The address actually bound, with the chosen port when 0 was asked for.
  const std::string& address() const { return address_; }
  // "mutual TLS as CN=db1", "peer credentials checked, socket 0660 root:stormark" or
  // "plain text, --insecure", for the start-up line.
  const std::string& security() const { return security_; }
  // The id of the phase the agent holds, or "" when it holds none.
  std::string HeldPhase() const;
  // A channel to this server that does not touch the network.
  std::shared_ptr<grpc::Channel> InProcessChannel();

  // Aborts the held phase (removing its files), then stops serving and removes its socket
  // file. Thread-safe; calls after the first do nothing.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until the server has shut down.
  void Wait();

 private:
  AgentServer() = default;
  // Every second, frees the slot of a phase whose controller abandoned it.
  void ReapAbandonedPhases() ABSL_LOCKS_EXCLUDED(mu_);
  // Who is calling: a unix user via listener_, else what the transport proved.
  PeerIdentity Identify(const grpc::ServerContext& context) const;

  std::string address_;
  std::string security_;
  LogFn log_;
  std::unique_ptr<PhaseRunner> runner_;
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> server_;
  // Set when listening on a unix socket; it accepts and hands connections to server_.
  std::unique_ptr<UnixListener> listener_;

  absl::Mutex mu_;
  common::MonotonicCondVar stop_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reaper_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RPC_SERVER_H_
