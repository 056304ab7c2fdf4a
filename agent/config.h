// The agent's configuration: what this host allows. Only targets named here can be used,
// and a request names a target, never a path.
//
//   # /etc/stormark/agent.yaml
//   targets:
//     scratch:            # the name controllers use
//       dir: /srv/bench   # an existing directory; phases create and remove files in it
//     disk1:
//       block: /dev/sdb   # a raw block device, or a regular file (created if missing)
//       size: 100G        # optional for a device (default: all of it), needed for a new file
//       disposable: true  # workloads may write to it; without this, reads only
//     ceiling:
//       null: true        # the null device: measures stormark's own cost
//       size: 1T          # its addressable size (default 1 TiB)
//   commands:             # the `command` workload: off unless enabled here
//     enabled: true
//     allow: [tar, /usr/bin/unrar]   # optional: only these executables (no shell then,
//                                    # unless sh is listed)
//   allow_drop_caches: true          # default; false refuses `cache: drop` (it warns)
//   allow_tuning: false              # default; true lets plans set the scheduler,
//                                    # read_ahead_kb, nr_requests and queue_depth of a
//                                    # target's device (restored after each phase)
//   tls: ..., scratch: ..., limits: ...  # see agent/policy.h
#ifndef STORMARK_AGENT_CONFIG_H_
#define STORMARK_AGENT_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/policy.h"
#include "common/spec_check.h"
#include "common/status.h"

namespace stormark::agent {

struct TargetConfig {
  // [A-Za-z0-9._-], 1 to 64 characters.
  std::string name;
  // "dir", "block" or "null".
  std::string kind;
  // Absolute path of the directory, or of the block device or file; empty for null.
  std::string path;
  // Block and null: the bytes workloads may address; 0 means all of the device or file.
  uint64_t size = 0;
  // Block: workloads may write to it (the data on it is disposable).
  bool disposable = false;
};

// Whether and which commands the `command` workload may run.
struct CommandPolicy {
  bool enabled = false;
  // Real paths of the allowed executables; empty means any (when enabled).
  std::vector<std::string> allow;

  // OK when `executable` (a real path) may run; PERMISSION_DENIED naming the setting
  // otherwise.
  common::Status Check(const std::string& executable) const;
};

// The size of a null target that gives none.
inline constexpr uint64_t kDefaultNullSize = uint64_t{1} << 40;

struct AgentConfig {
  std::vector<TargetConfig> targets;
  CommandPolicy commands;
  // Whether a phase may drop the host's page cache (it slows every other user of the host
  // for a while).
  bool allow_drop_caches = true;
  // Whether a phase may change the block-queue settings of a target's device.
  bool allow_tuning = false;
  // agent/policy.h: mutual TLS files (empty: plain text), the directories dir targets must
  // lie under (empty: anywhere), and per-phase caps.
  TlsConfig tls;
  std::vector<std::string> scratch;
  ResourceLimits limits;

  // The target called `name`, or nullptr.
  const TargetConfig* FindTarget(std::string_view name) const;
  // "scratch, fast" or "(none)".
  std::string TargetNames() const;
};

// Parses a configuration. `source` names it in errors, which read
// "agent.yaml:4: target 'scratch': directory /nope does not exist".
common::StatusOr<AgentConfig> ParseAgentConfig(std::string_view yaml, std::string_view source);

// Reads and parses a configuration file.
common::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path);

using common::IsValidName;

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_CONFIG_H_
