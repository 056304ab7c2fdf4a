// What the agent's YAML config parsers (config, policy, access, identities, commands) share: an
// error that names the file and the line of the node it is about, and a node's scalar text.
#ifndef STORMARK_AGENT_CONFIG_YAML_ERROR_H_
#define STORMARK_AGENT_CONFIG_YAML_ERROR_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/strings.h"
#include "yaml-cpp/yaml.h"

namespace stormark::agent {

// INVALID_ARGUMENT "SOURCE:LINE: WHAT", or "SOURCE: WHAT" for a node without a position.
inline common::Status YamlErrorAt(std::string_view source, const YAML::Node& node,
                                  std::string_view what) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return absl::InvalidArgumentError(common::StrCat(source, ": ", what));
  return absl::InvalidArgumentError(common::StrCat(source, ":", mark.line + 1, ": ", what));
}

// The node's text if it is a scalar, else "".
inline std::string YamlScalar(const YAML::Node& node) {
  return node.IsScalar() ? node.as<std::string>() : "";
}

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_CONFIG_YAML_ERROR_H_
