// Who is at the other end of each connection the agent accepted on its unix socket and handed
// to gRPC (grpc::AddInsecureChannelFromFd). gRPC names such a connection's peer "fd:N", N
// being the descriptor it was given, and tells the service nothing else; this registry maps
// that name back to the identity the kernel reported when the connection was accepted.
//
// A descriptor number is reused by the kernel once gRPC closes it, while a call of the old
// connection may still be on its way to a handler. So a number stays taken by its entry
// until the connection has been closed for `keep_closed_nanos`: Add never hands gRPC a number
// that an entry holds (it moves the new connection to a free number instead), and every "fd:N"
// a handler sees names exactly one connection for as long as its entry lives.
//
// Thread-safe.
#ifndef STORMARK_AGENT_RPC_PEER_REGISTRY_H_
#define STORMARK_AGENT_RPC_PEER_REGISTRY_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/access/peer_identity.h"
#include "common/clock.h"
#include "common/status.h"

namespace stormark::agent {

class PeerRegistry {
 public:
  struct Entry {
    PeerIdentity identity;
    // Why the connection is refused (it then goes to the server that refuses every call);
    // "" when it is admitted.
    std::string refusal;
  };

  // Long enough that no call can still be waiting for a handler thread.
  static constexpr int64_t kKeepClosedNanos = int64_t{300} * 1'000'000'000;

  // `clock` must outlive the registry.
  explicit PeerRegistry(const common::Clock& clock, int64_t keep_closed_nanos = kKeepClosedNanos);

  PeerRegistry(const PeerRegistry&) = delete;
  PeerRegistry& operator=(const PeerRegistry&) = delete;

  // Records `entry` for the connected socket `fd`, which the registry takes over. Returns the
  // descriptor to give gRPC: `fd` itself, or, when an entry holds that number, a duplicate
  // at a number none holds (`fd` is then closed). On error `fd` is closed.
  common::StatusOr<int> Add(int fd, Entry entry);

  // The entry of the connection gRPC calls `peer` ("fd:N"); nullopt for any other peer and
  // for a connection whose entry has expired.
  std::optional<Entry> Find(std::string_view peer) const;

  // Notes which connections gRPC has closed (their number no longer holds their socket),
  // and forgets those closed for longer than keep_closed_nanos. Call about once a second.
  void Sweep();

  // Entries held, closed ones included; and those whose connection is still open.
  size_t size() const;
  size_t open() const;

 private:
  struct Held {
    Entry entry;
    dev_t dev = 0;  // the socket's identity, to tell it from a later file at the same number
    ino_t ino = 0;
    int64_t closed_at_mono = -1;  // -1 while open
  };

  const common::Clock& clock_;
  const int64_t keep_closed_nanos_;
  mutable absl::Mutex mu_;
  std::map<int, Held> held_ ABSL_GUARDED_BY(mu_);  // By descriptor number.
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RPC_PEER_REGISTRY_H_
