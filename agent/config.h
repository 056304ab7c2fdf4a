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
#ifndef STORMARK_AGENT_CONFIG_H_
#define STORMARK_AGENT_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

// The size of a null target that gives none.
inline constexpr uint64_t kDefaultNullSize = uint64_t{1} << 40;

struct AgentConfig {
  std::vector<TargetConfig> targets;

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
