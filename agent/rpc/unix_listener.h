// The agent's unix socket. The agent accepts each connection itself, reads the kernel's
// credentials of the process behind it (SO_PEERCRED), and only then hands it to gRPC
// (grpc::AddInsecureChannelFromFd): an admitted connection to the agent's server, a refused
// one to a server of its own whose every call fails with PERMISSION_DENIED naming the
// caller's uid and the rule (agent/access/access.h). A refused caller never reaches the service.
//
// One socket, one agent: Bind takes an exclusive lock on PATH.lock for the listener's
// lifetime, refuses a socket some process still accepts on, and removes only a stale one.
// The socket file is made mode 0660, group `stormark` when that group exists (else the
// agent's own group); a missing directory is made 0750 with the same group.
//
// Thread-safe.
#ifndef STORMARK_AGENT_RPC_UNIX_LISTENER_H_
#define STORMARK_AGENT_RPC_UNIX_LISTENER_H_

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "agent/access/access.h"
#include "agent/access/peer_identity.h"
#include "agent/rpc/peer_registry.h"
#include "common/clock.h"
#include "common/status.h"

namespace stormark::agent {

class UnixListener {
 public:
  struct Options {
    // Absolute path of the socket file.
    std::string path;
    AccessConfig access;
    // One line per refused connection and per notable event (a stale socket removed).
    std::function<void(const std::string&)> log;
  };

  // Binds and listens; accepts nothing until Serve. Errors are one line naming the path:
  // FAILED_PRECONDITION when another agent holds the socket or a live process serves it,
  // or the path is not a socket.
  static common::StatusOr<std::unique_ptr<UnixListener>> Bind(Options options,
                                                              const common::Clock& clock);
  // Stop(), then closes the lock.
  ~UnixListener();

  UnixListener(const UnixListener&) = delete;
  UnixListener& operator=(const UnixListener&) = delete;

  // Starts accepting; admitted connections go to `admitted`, which must be started and
  // outlive Stop(). Call once.
  common::Status Serve(grpc::Server* admitted);

  // Stops accepting, shuts the refusing server down and removes the socket file if it is
  // still the one Bind made. Connections already handed to `admitted` are that server's to
  // close. Idempotent.
  void Stop();

  // The identity of the connection gRPC names `peer` ("fd:N"); kUnknown for any other.
  PeerIdentity Identify(const std::string& peer) const;

  const std::string& path() const { return options_.path; }
  // The file mode and group the socket was given, for the start-up line: "0660 root:stormark".
  const std::string& permissions() const { return permissions_; }

 private:
  UnixListener(Options options, const common::Clock& clock);
  void AcceptLoop();
  void Accept();

  const Options options_;
  const uid_t agent_uid_;
  PeerRegistry registry_;
  int lock_fd_ = -1;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  dev_t socket_dev_ = 0;
  ino_t socket_ino_ = 0;
  std::string permissions_;

  class RefusingService;
  std::unique_ptr<RefusingService> refusing_service_;
  std::unique_ptr<grpc::Server> refusing_;
  grpc::Server* admitted_ = nullptr;
  std::thread acceptor_;
  std::atomic<bool> stopped_{false};
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RPC_UNIX_LISTENER_H_
