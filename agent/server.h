// A running agent: the gRPC server, the service and the phase slot, wired together.
#ifndef STORMARK_AGENT_SERVER_H_
#define STORMARK_AGENT_SERVER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "agent/config.h"
#include "agent/phase_runner.h"
#include "agent/service.h"
#include "common/clock.h"
#include "common/status.h"

namespace stormark::agent {

struct AgentServerOptions {
  // "HOST:PORT" or "unix:/path". Port 0 picks a free port (see AgentServer::address()).
  std::string listen = "127.0.0.1:7420";
  // Allow plain text on a non-loopback address.
  bool insecure = false;
  // The agent's config; its `tls` files, when given, make the server require mutual TLS on
  // any address.
  AgentConfig config;
  LogFn log;
  stormark::v1::Version protocol;
};

class AgentServer {
 public:
  // Starts listening. `clock` must outlive the server. Refuses a non-loopback address
  // without `insecure`.
  static common::StatusOr<std::unique_ptr<AgentServer>> Start(AgentServerOptions options,
                                                              const common::Clock& clock);
  ~AgentServer();

  // The address actually bound, with the chosen port when 0 was asked for.
  const std::string& address() const { return address_; }
  // "mutual TLS as CN=db1" or "plain text", for the start-up line.
  const std::string& security() const { return security_; }
  // A channel to this server that does not touch the network.
  std::shared_ptr<grpc::Channel> InProcessChannel();

  // Aborts the held phase (removing its files), then stops serving. Thread-safe; calls
  // after the first do nothing.
  void Shutdown();
  // Blocks until the server has shut down.
  void Wait();

 private:
  AgentServer() = default;
  // Every second, frees the slot of a phase whose controller abandoned it.
  void ReapAbandonedPhases();

  std::string address_;
  std::string security_;
  LogFn log_;
  std::unique_ptr<PhaseRunner> runner_;
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> server_;

  std::mutex mu_;
  std::condition_variable stop_;
  bool stopping_ = false;  // Guarded by mu_.
  std::thread reaper_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_SERVER_H_
