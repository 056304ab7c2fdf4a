// The agent's configuration: what this host allows. Only targets named here can be used,
// and a request names a target, never a path.
//
//   # /etc/stormark/agent.yaml
//   targets:
//     scratch:            # the name controllers use
//       dir: /srv/bench   # an existing directory; phases create and remove files in it
#ifndef STORMARK_AGENT_CONFIG_H_
#define STORMARK_AGENT_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/spec_check.h"
#include "common/status.h"

namespace stormark::agent {

struct TargetConfig {
  // [A-Za-z0-9._-], 1 to 64 characters.
  std::string name;
  // "dir" for now.
  std::string kind;
  // Absolute path of the directory.
  std::string path;
};

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
