// Who may use the agent's unix socket: root, the agent's own user, and the users and groups
// its config names.
//
//   access:
//     users: [alice, 1001]   # user names or uids
//     groups: [stormark]     # group names or gids; a peer in one of them (its primary
//                            # group or a supplementary one) is let in
//
// The socket's file mode (0660, group stormark when that group exists) is the first gate; this
// check is the second, made on the kernel's credentials of each connection, so a socket file
// that was made world-writable still admits only these. Over TCP the transport decides
// (mutual TLS, or anyone under --insecure). Plain values; thread-compatible.
#ifndef STORMARK_AGENT_ACCESS_ACCESS_H_
#define STORMARK_AGENT_ACCESS_ACCESS_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "agent/access/peer_identity.h"
#include "common/status.h"

namespace YAML {
class Node;
}

namespace stormark::agent {

struct AccessConfig {
  struct Id {
    uint32_t id = 0;
    std::string name;  // as written, or the passwd/group name of a number; "" if none
  };
  std::vector<Id> users;
  std::vector<Id> groups;
};

// Parses the `access:` map into `access`. Names are looked up now: a user or group this host
// does not know is INVALID_ARGUMENT naming `source`, the line and the name.
common::Status ParseAccess(const YAML::Node& node, std::string_view source, AccessConfig* access);

// OK when the unix peer `peer` may use an agent running as `agent_uid`; PERMISSION_DENIED
// otherwise, one line naming the peer's uid and the rule it failed:
// "uid 65534 (nobody) gid 65534 may not use this agent: it admits root, its own user (uid 0)
// and the config's access.users (none) and access.groups (none)".
common::Status CheckUnixPeer(const AccessConfig& access, const PeerIdentity& peer, uid_t agent_uid);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_ACCESS_ACCESS_H_
