// Who is calling the agent: the unix user behind a connection to its socket (the kernel's
// SO_PEERCRED and SO_PEERGROUPS of the connected socket), the name a controller's TLS
// certificate proves, or only an address when the transport authenticates nobody
// (plain-text TCP under --insecure).
//
// The service hands a PeerIdentity to the phase runner with each Prepare; what an identity
// may do is the config's business (agent/access/access.h). Plain values; thread-compatible.
#ifndef STORMARK_AGENT_ACCESS_PEER_IDENTITY_H_
#define STORMARK_AGENT_ACCESS_PEER_IDENTITY_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace grpc {
class AuthContext;
class ServerContext;
}  // namespace grpc

namespace stormark::agent {

struct PeerIdentity {
  enum class Kind {
    kUnknown,          // nothing is known: treat as nobody
    kUnixUser,         // a process connected to the agent's unix socket
    kCertificate,      // a controller that presented a certificate the agent's CA signed
    kUnauthenticated,  // plain-text TCP (--insecure): an address, which proves nothing
    kInProcess,        // a channel inside the agent's own process (tests)
  };
  Kind kind = Kind::kUnknown;

  // kUnixUser: the peer process's effective ids when it connected, and its supplementary
  // groups then (from the kernel, not from /etc/group). `user` is "" for a uid with no
  // passwd entry.
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  pid_t pid = 0;
  std::string user;
  std::vector<gid_t> groups;

  // kCertificate: the subject's common name and the subjectAltName entries.
  std::string common_name;
  std::vector<std::string> subject_alt_names;

  // The transport's peer address ("ipv4:10.0.0.5:41234"); "" for unix peers.
  std::string address;

  // For log lines and refusals: "uid 1000 (alice) gid 1000 pid 4242",
  // "ipv4:10.0.0.5:41234 CN=controller", "ipv4:127.0.0.1:41234" (unauthenticated),
  // "in-process", "unknown".
  std::string Describe() const;
};

// The caller of an RPC, as the server's transport knows it. Safe for concurrent use.
using IdentifyFn = std::function<PeerIdentity(const grpc::ServerContext&)>;

// The identity of the process at the other end of `fd`, a connected AF_UNIX stream socket.
// The user name comes from the passwd database; the groups from SO_PEERGROUPS (or, on a
// kernel without it, getgrouplist of that user).
common::StatusOr<PeerIdentity> UnixPeerOf(int fd);

// A peer that TLS authenticated (`auth.IsPeerAuthenticated()`), or kUnauthenticated with
// just the address when it did not.
PeerIdentity TransportPeerOf(const grpc::AuthContext* auth, std::string address);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_ACCESS_PEER_IDENTITY_H_
