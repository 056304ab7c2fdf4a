#include "agent/config/config.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "agent/targets/target_kind.h"
#include "common/log_text.h"
#include "common/strings.h"
#include "common/text_file.h"
#include "common/units.h"
#include "yaml-cpp/yaml.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;

Status ErrorAt(std::string_view source, const YAML::Mark& mark, std::string_view what) {
  if (mark.is_null()) return absl::InvalidArgumentError(common::StrCat(source, ": ", what));
  return absl::InvalidArgumentError(common::StrCat(source, ":", mark.line + 1, ": ", what));
}

}  // namespace

const TargetConfig* AgentConfig::FindTarget(std::string_view name) const {
  for (const auto& t : targets) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string AgentConfig::TargetNames() const {
  if (targets.empty()) return "(none)";
  std::string names;
  for (const auto& t : targets) names += (names.empty() ? "" : ", ") + t.name;
  return names;
}

namespace {

// Bounds of io_timeout and connect_timeout: below the first, a busy LAN fails requests that
// would have completed; above the second, a dead server holds a phase for too long.
constexpr int64_t kMinNetTimeoutNanos = 100'000'000;
constexpr int64_t kMaxNetTimeoutNanos = int64_t{3600} * 1'000'000'000;

// "target 'NAME': what" at the node's line.
Status TargetError(std::string_view source, const YAML::Node& node, const TargetConfig& target,
                   std::string_view what) {
  return ErrorAt(source, node.Mark(), common::StrCat("target '", target.name, "': ", what));
}

// Reads one of SharedTargetKeys into `target`.
Status ParseSharedKey(std::string_view source, const std::string& key, const YAML::Node& value,
                      TargetConfig* target) {
  if (!value.IsScalar()) {
    return TargetError(source, value, *target, common::StrCat("'", key, "' must be a value"));
  }
  const std::string text = value.as<std::string>();
  if (key == "size") {
    auto size = common::ParseSize(text);
    if (!size.ok())
      return TargetError(source, value, *target, std::string(size.status().message()));
    target->size = *size;
    if (target->size == 0) return TargetError(source, value, *target, "size must be above 0");
  } else if (key == "disposable") {
    auto disposable = common::ParseBool(key, text);
    if (!disposable.ok())
      return TargetError(source, value, *target, std::string(disposable.status().message()));
    target->disposable = *disposable;
  } else if (key == "strict_modes") {
    auto strict = common::ParseBool(key, text);
    if (!strict.ok())
      return TargetError(source, value, *target, std::string(strict.status().message()));
    target->strict_modes = *strict;
  } else if (key == "device") {
    if (!text.starts_with("/dev/") || text.size() == 5 || text.find("/..") != std::string::npos) {
      return TargetError(source, value, *target,
                         common::StrCat("device '", common::LogSafe(text),
                                        "' must name a block device, such as /dev/sdb"));
    }
    target->device = text;
  } else {  // io_timeout, connect_timeout
    auto nanos = common::ParseDurationOf(key, text);
    if (!nanos.ok())
      return TargetError(source, value, *target, std::string(nanos.status().message()));
    if (*nanos < kMinNetTimeoutNanos || *nanos > kMaxNetTimeoutNanos) {
      return TargetError(source, value, *target,
                         common::StrCat("'", key, "' must be between 100ms and 1h"));
    }
    (key == "io_timeout" ? target->io_timeout_nanos : target->connect_timeout_nanos) = *nanos;
  }
  return absl::OkStatus();
}

bool Contains(const std::vector<std::string_view>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every key some kind takes besides its own: "size, disposable, ..., tls, chap".
std::string OtherTargetKeys() {
  std::vector<std::string_view> keys = SharedTargetKeys();
  for (const TargetKind* kind : TargetKinds()) {
    for (std::string_view key : kind->keys) {
      if (!Contains(keys, key)) keys.push_back(key);
    }
  }
  std::string list;
  for (std::string_view key : keys) list += common::StrCat(list.empty() ? "" : ", ", key);
  return list;
}

// Fills in `target` from its map: exactly one kind's key (agent/targets/target_kind.h) and the
// other keys that kind takes. The shared keys are read here, the rest by the kind.
Status ParseTarget(const YAML::Node& body, std::string_view source, TargetConfig* target) {
  const TargetKind* kind = nullptr;
  YAML::Node kind_node;
  std::vector<std::pair<std::string, YAML::Node>> keys;  // With the node of the key itself.
  for (const auto& field : body) {
    const std::string key = field.first.as<std::string>();
    if (const TargetKind* named = FindTargetKind(key)) {
      if (kind != nullptr) {
        return TargetError(source, field.first, *target,
                           common::StrCat("has both '", kind->name, "' and '", key,
                                          "'; a target is one of ", TargetKindNames()));
      }
      kind = named;
      kind_node.reset(field.second);
      continue;
    }
    bool known = Contains(SharedTargetKeys(), key);
    for (const TargetKind* k : TargetKinds()) known |= Contains(k->keys, key);
    if (!known) {
      return TargetError(
          source, field.first, *target,
          common::StrCat("unknown field '", common::LogSafe(key), "' (a target is one of ",
                         TargetKindNames(), ", with ", OtherTargetKeys(), ")"));
    }
    keys.emplace_back(key, field.first);
  }
  if (kind == nullptr) {
    std::string forms;
    const auto& kinds = TargetKinds();
    for (size_t i = 0; i < kinds.size(); ++i) {
      forms += common::StrCat(i == 0                  ? ""
                              : i + 1 == kinds.size() ? " or "
                                                      : ", ",
                              "'", kinds[i]->name, ": ", kinds[i]->value, "'");
    }
    return ErrorAt(source, body.Mark(),
                   common::StrCat("target '", target->name, "' needs one of ", forms));
  }
  target->kind = std::string(kind->name);
  if (!kind_node.IsScalar()) {
    return TargetError(source, kind_node, *target,
                       common::StrCat("'", kind->name, "' must be one value, as in '", kind->name,
                                      ": ", kind->value, "'"));
  }
  for (const auto& [key, key_node] : keys) {
    if (!Contains(kind->keys, key)) {
      return TargetError(source, key_node, *target,
                         common::StrCat("'", key, "' applies to ", KindsTaking(key),
                                        " targets, not ", kind->name));
    }
    if (Contains(SharedTargetKeys(), key)) {
      RETURN_IF_ERROR(ParseSharedKey(source, key, body[key], target));
    }
  }
  return kind->parse(TargetYaml{source, body, kind_node}, target);
}

StatusOr<AgentConfig> ParseYaml(const YAML::Node& root, std::string_view source) {
  AgentConfig config;
  if (!root.IsDefined() || root.IsNull()) {
    return absl::InvalidArgumentError(common::StrCat(source, ": empty; it needs a 'targets:' map"));
  }
  if (!root.IsMap()) return ErrorAt(source, root.Mark(), "expected a map with 'targets:'");
  for (const auto& entry : root) {
    const std::string key = entry.first.as<std::string>();
    if (IsPolicyKey(key)) {
      RETURN_IF_ERROR(ParsePolicyKey(key, entry.second, source, &config));
      continue;
    }
    if (key == "access") {
      RETURN_IF_ERROR(ParseAccess(entry.second, source, &config.access));
      continue;
    }
    if (key != "targets" && key != "commands" && key != "allow_drop_caches" &&
        key != "allow_tuning" && key != "stuck_worker_after" && key != "stalled_io_after") {
      return ErrorAt(source, entry.first.Mark(),
                     common::StrCat("unknown field '", key,
                                    "' (known: targets, commands, allow_drop_caches, "
                                    "allow_tuning, stuck_worker_after, stalled_io_after, access, ",
                                    kPolicyKeyNames, ")"));
    }
  }
  for (auto [key, field] : {std::pair{"stuck_worker_after", &config.stuck_worker_after_nanos},
                            std::pair{"stalled_io_after", &config.stalled_io_after_nanos}}) {
    const YAML::Node node = root[key];
    if (!node) continue;
    auto nanos = common::ParseDurationOf(key, node.IsScalar() ? node.as<std::string>() : "?");
    if (nanos.ok() && *nanos <= 0) {
      nanos = absl::InvalidArgumentError(common::StrCat("bad ", key, ": must be above 0"));
    }
    if (!nanos.ok()) return ErrorAt(source, node.Mark(), std::string(nanos.status().message()));
    *field = *nanos;
  }
  if (const YAML::Node commands = root["commands"]) {
    ASSIGN_OR_RETURN(config.commands, ParseCommandPolicy(commands, source));
  }
  for (auto [key, field] : {std::pair{"allow_drop_caches", &config.allow_drop_caches},
                            std::pair{"allow_tuning", &config.allow_tuning}}) {
    const YAML::Node node = root[key];
    if (!node) continue;
    auto allowed = common::ParseBool(key, node.IsScalar() ? node.as<std::string>() : "?");
    if (!allowed.ok()) return ErrorAt(source, node.Mark(), std::string(allowed.status().message()));
    *field = *allowed;
  }
  const YAML::Node targets = root["targets"];
  if (!targets || !targets.IsMap() || targets.size() == 0) {
    return ErrorAt(source, targets ? targets.Mark() : root.Mark(),
                   "'targets' must be a non-empty map of name: {dir: PATH}");
  }
  for (const auto& entry : targets) {
    TargetConfig target;
    target.name = entry.first.as<std::string>();
    const YAML::Mark mark = entry.first.Mark();
    if (!IsValidName(target.name)) {
      return ErrorAt(source, mark,
                     common::StrCat("target name '", common::LogSafe(target.name),
                                    "' must be 1-64 characters of A-Z a-z 0-9 . _ -"));
    }
    const YAML::Node body = entry.second;
    if (!body.IsMap()) {
      return ErrorAt(
          source, body.Mark(),
          common::StrCat("target '", target.name, "' must be a map such as {dir: PATH}"));
    }
    RETURN_IF_ERROR(ParseTarget(body, source, &target));
    if (Status inside = CheckScratch(config, target); !inside.ok()) {
      return ErrorAt(source, mark, std::string(inside.message()));
    }
    if (config.FindTarget(target.name) != nullptr) {
      return ErrorAt(source, mark, common::StrCat("target '", target.name, "' is defined twice"));
    }
    config.targets.push_back(std::move(target));
  }
  RETURN_IF_ERROR(CheckRuleTargets(config.identities, config));
  return config;
}

}  // namespace

StatusOr<AgentConfig> ParseAgentConfig(std::string_view yaml, std::string_view source) {
  // yaml-cpp reports malformed input and failed conversions by throwing; they stop here.
  try {
    return ParseYaml(YAML::Load(std::string(yaml)), source);
  } catch (const YAML::Exception& e) {
    return ErrorAt(source, e.mark, e.msg);
  }
}

StatusOr<AgentConfig> LoadAgentConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, common::ReadTextFile(path, "config"));
  return ParseAgentConfig(text, path);
}

}  // namespace stormark::agent
