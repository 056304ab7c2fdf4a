// Who is calling the agent, and what the config's `identities:` rules let that identity do.
//
//   identities:                      # absent: every caller the transport admits may do
//     - match: {cn: ci-runner}       # everything (the default, as before)
//       targets: [scratch]           # default: every target
//       write: true                  # default false
//       commands: false              # default false: `command` phases
//       hooks: false                 # default false: a plan's setup/teardown hooks
//       tuning: false                # default false: block-queue tuning of the device
//     - match: {user: alice}         # a local user (needs the unix socket's peer credentials)
//       targets: [scratch, disk1]
//
// A rule's `match` names one or more of: cn (the TLS certificate's common name), san (one of
// its subjectAltNames), user, group (a local peer's user, or one of its groups); all that are
// given must hold. The first rule that matches a caller decides; a caller that matches none
// may prepare nothing. The local operator (root or the agent's own user on its unix socket)
// is not limited by the rules: it could edit the config anyway.
//
// Plain values and pure functions; thread-compatible.
#ifndef STORMARK_AGENT_AUTHZ_H_
#define STORMARK_AGENT_AUTHZ_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace YAML {
class Node;
}

namespace stormark::agent {

struct AgentConfig;
struct TargetConfig;

// The caller of an RPC, as far as its transport proves it (agent/service.h IdentityOf).
struct Identity {
  enum class Kind {
    kUnauthenticated,  // plain-text TCP: an address, which proves little
    kCertificate,      // mutual TLS: a certificate the agent's CA signed
    kLocal,            // the agent's unix socket
    kInProcess,        // a channel inside the agent's own process
  };
  Kind kind = Kind::kUnauthenticated;
  // What phase ownership compares and refusals and the log name: "CN=ci-runner",
  // "local operator (unix socket)", "in-process", or "unauthenticated ipv4:10.0.0.5" (the
  // address without its port, which changes with every connection).
  std::string name;
  // The transport's peer address as gRPC gives it ("ipv4:10.0.0.5:41234"), for the log.
  std::string address;
  // kCertificate: the subject's common name and its subjectAltName entries.
  std::string common_name;
  std::vector<std::string> subject_alt_names;
  // A local peer's user name and group names, when the transport knows them.
  std::string user;
  std::vector<std::string> groups;
  // Root or the agent's own user: not limited by the rules, and may end any phase
  // (AbortHeldPhase).
  bool local_operator = false;

  // For log lines: "ipv4:10.0.0.5:41234 CN=ci-runner", "ipv4:127.0.0.1:41234",
  // "unix: local operator (unix socket)".
  std::string Describe() const;
};

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

#endif  // STORMARK_AGENT_AUTHZ_H_
