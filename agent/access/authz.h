// Who is calling the agent, and what the config's `identities:` rules let that identity do.
//
//   identities:                      # absent: every caller the transport admits may do
//     - match: {cn: ci-runner}       # everything (the default, as before)
//       targets: [scratch]           # default: every target
//       write: true                  # default false
//       commands: false              # default false: `command` phases
//       hooks: false                 # default false: a plan's setup/teardown hooks
//       tuning: false                # default false: block-queue tuning of the device
//     - match: {user: alice}         # a local user on the unix socket (its peer credentials)
//       targets: [scratch, disk1]
//
// A rule's `match` names one or more of: cn (the TLS certificate's common name), san (one of
// its subjectAltNames), user, group (a local peer's user, or one of its groups); all that are
// given must hold. The first rule that matches a caller decides; a caller that matches none
// may prepare nothing. The local operator (root or the agent's own user on its unix socket)
// is not limited by the rules: it could edit the config anyway.
//
// Plain values and pure functions; thread-compatible.
#ifndef STORMARK_AGENT_ACCESS_AUTHZ_H_
#define STORMARK_AGENT_ACCESS_AUTHZ_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "agent/access/peer_identity.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace YAML {
class Node;
}

namespace stormark::agent {

struct AgentConfig;
struct TargetConfig;

// The caller of an RPC as the rules and phase ownership see it (IdentityOf below).
struct Identity {
  enum class Kind {
    kUnauthenticated,  // plain-text TCP: an address, which proves little (or nothing known)
    kCertificate,      // mutual TLS: a certificate the agent's CA signed
    kLocal,            // a local user on the agent's unix socket, by its peer credentials
    kInProcess,        // a channel inside the agent's own process
  };
  Kind kind = Kind::kUnauthenticated;
  // What phase ownership compares and refusals name: "CN=ci-runner", "uid 1000 (alice)",
  // "in-process", or "unauthenticated ipv4:10.0.0.5" (the address without its port, which
  // changes with every connection). Never a pid or a port.
  std::string name;
  // PeerIdentity::Describe() of the call, for the log ("ipv4:10.0.0.5:41234 CN=ci-runner",
  // "uid 1000 (alice) gid 1000 pid 4242").
  std::string peer;
  // kCertificate: the subject's common name and its subjectAltName entries.
  std::string common_name;
  std::vector<std::string> subject_alt_names;
  // kLocal: the user's name and the names of its groups (primary and supplementary).
  std::string user;
  std::vector<std::string> groups;
  // Root or the agent's own user on the unix socket, or the agent itself: not limited by the
  // rules, and may end any phase (AbortHeldPhase).
  bool local_operator = false;

  // For log lines: `peer`, else `name`.
  std::string Describe() const;
};

// The one place that turns what the transport proved (agent/access/peer_identity.h) into an
// Identity, for an agent running as `agent_uid`. Looks group names up in the group database.
Identity IdentityOf(const PeerIdentity& peer, uid_t agent_uid);

// One entry of `identities:`.
struct IdentityRule {
  // What the caller must be; empty fields are not checked, at least one is set.
  std::string cn;
  std::string san;
  std::string user;
  std::string group;
  // Target names it may use; empty means every target.
  std::vector<std::string> targets;
  bool write = false;
  bool commands = false;
  bool hooks = false;
  bool tuning = false;
  // Where the rule is, for refusals: "agent.yaml:12".
  std::string where;

  bool Matches(const Identity& caller) const;
  // "identities rule at agent.yaml:12 (cn: ci-runner)".
  std::string Describe() const;
};

// Parses the `identities:` list into `rules`. Errors name `source` and the line.
common::Status ParseIdentities(const YAML::Node& node, std::string_view source,
                               std::vector<IdentityRule>* rules);

// INVALID_ARGUMENT naming the rule when one lists a target `config` does not define.
common::Status CheckRuleTargets(const std::vector<IdentityRule>& rules, const AgentConfig& config);

// Whether `spec` changes data on `target`: every command and hook, stream and randio writes,
// bonnie and postmark (they create files), and a stream read of a disposable device (it lays
// the data out first). A read of a dir target reads a file the phase lays out in its own
// directory, which is not a write to anything that was there.
bool PhaseWrites(const stormark::v1::PhaseSpec& spec, const TargetConfig& target);

// OK when `caller` may prepare `spec` on `target` (nullptr: unknown, left to the factory)
// under `rules`: always when there are no rules or the caller is the local operator.
// PERMISSION_DENIED otherwise, one line naming the caller, what it may not do and the rule:
// "CN=ci-runner may not write to target 'disk1' (stream): identities rule at agent.yaml:12
// (cn: ci-runner) has write: false".
common::Status CheckAccess(const std::vector<IdentityRule>& rules, const Identity& caller,
                           const stormark::v1::PhaseSpec& spec, const TargetConfig* target);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_ACCESS_AUTHZ_H_
