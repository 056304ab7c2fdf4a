#include "agent/config.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include "agent/devices/aoe/aoe_address.h"
#include "agent/devices/net_uri.h"
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

Status CheckBlockPath(std::string_view source, const YAML::Node& node, TargetConfig* target) {
  struct stat st;
  if (stat(target->path.c_str(), &st) == 0) {
    if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
      return TargetError(source, node, *target,
                         common::StrCat("block ", target->path,
                                        " is neither a block device nor a regular file"));
    }
    return absl::OkStatus();
  }
  // A file that does not exist yet is created (and filled) on first use: it needs a size and
  // an existing directory.
  const std::string parent = target->path.substr(0, target->path.rfind('/') + 1);
  if (stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return TargetError(source, node, *target,
                       common::StrCat("block ", target->path, " does not exist"));
  }
  if (target->size == 0) {
    return TargetError(source, node, *target,
                       common::StrCat("block file ", target->path,
                                      " does not exist; give 'size' to have the agent create it"));
  }
  return absl::OkStatus();
}

// A path given under tls: or chap:, which must name an existing file (or directory).
Status CheckPathField(std::string_view source, const YAML::Node& node, const TargetConfig& target,
                      std::string_view field, const std::string& path, bool directory) {
  struct stat st;
  if (path.empty() || path.front() != '/') {
    return TargetError(source, node, target,
                       common::StrCat(field, " '", path, "' must be an absolute path"));
  }
  if (stat(path.c_str(), &st) != 0 || (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
    return TargetError(source, node, target,
                       common::StrCat(field, " ", path, " is not an existing ",
                                      directory ? "directory" : "file"));
  }
  return absl::OkStatus();
}

// The scalar fields of a tls: or chap: map, checked against `known`.
StatusOr<std::vector<std::pair<std::string, YAML::Node>>> SettingsMap(
    std::string_view source, const YAML::Node& node, const TargetConfig& target,
    std::string_view name, std::initializer_list<std::string_view> known) {
  std::string list;
  for (std::string_view k : known) list += common::StrCat(list.empty() ? "" : ", ", k);
  if (!node.IsMap()) {
    return TargetError(source, node, target,
                       common::StrCat("'", name, "' must be a map of ", list));
  }
  std::vector<std::pair<std::string, YAML::Node>> fields;
  for (const auto& field : node) {
    const std::string key = field.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return TargetError(source, field.first, target,
                         common::StrCat("unknown field '", name, ".", key, "' (known: ", list, ")"));
    }
    if (!field.second.IsScalar() || field.second.as<std::string>().empty()) {
      return TargetError(source, field.second, target,
                         common::StrCat("'", name, ".", key, "' must be a non-empty value"));
    }
    fields.emplace_back(key, field.second);
  }
  return fields;
}

Status ParseNbdTls(std::string_view source, const YAML::Node& node, TargetConfig* target) {
  ASSIGN_OR_RETURN(auto fields,
                   SettingsMap(source, node, *target, "tls", {"certificates", "psk_file", "username"}));
  for (const auto& [key, value] : fields) {
    const std::string text = value.as<std::string>();
    if (key == "certificates") {
      RETURN_IF_ERROR(CheckPathField(source, value, *target, "tls.certificates", text, true));
      target->tls.certificates = text;
    } else if (key == "psk_file") {
      RETURN_IF_ERROR(CheckPathField(source, value, *target, "tls.psk_file", text, false));
      target->tls.psk_file = text;
    } else {
      target->tls.username = text;
    }
  }
  if (target->tls.certificates.empty() == target->tls.psk_file.empty()) {
    return TargetError(source, node, *target,
                       "'tls' needs exactly one of 'certificates: DIR' or 'psk_file: FILE'");
  }
  if (!target->tls.username.empty() && target->tls.psk_file.empty()) {
    return TargetError(source, node, *target, "'tls.username' goes with 'psk_file'");
  }
  return absl::OkStatus();
}

Status ParseChap(std::string_view source, const YAML::Node& node, TargetConfig* target) {
  ASSIGN_OR_RETURN(auto fields, SettingsMap(source, node, *target, "chap",
                                            {"user", "password", "password_file", "initiator"}));
  for (const auto& [key, value] : fields) {
    const std::string text = value.as<std::string>();
    if (key == "user") {
      target->chap.user = text;
    } else if (key == "password") {
      target->chap.password = text;
    } else if (key == "password_file") {
      RETURN_IF_ERROR(CheckPathField(source, value, *target, "chap.password_file", text, false));
      target->chap.password_file = text;
    } else {
      if (!text.starts_with("iqn.") && !text.starts_with("eui.") && !text.starts_with("naa.")) {
        return TargetError(source, value, *target,
                           common::StrCat("chap.initiator '", text,
                                          "' is not an iSCSI name (iqn., eui. or naa.)"));
      }
      target->chap.initiator = text;
    }
  }
  const bool has_secret = !target->chap.password.empty() || !target->chap.password_file.empty();
  if (!target->chap.password.empty() && !target->chap.password_file.empty()) {
    return TargetError(source, node, *target, "'chap' takes 'password' or 'password_file', not both");
  }
  if (target->chap.user.empty() != !has_secret) {
    return TargetError(source, node, *target,
                       "'chap' needs both 'user' and one of 'password' or 'password_file'");
  }
  return absl::OkStatus();
}

// An nbd or iscsi target: a URI the agent's initiator can use, and TLS or CHAP settings that
// fit it.
Status CheckNetTarget(std::string_view source, const YAML::Node& body, const YAML::Node& kind_node,
                      TargetConfig* target) {
  target->cache = std::make_shared<NetTargetCache>();
  if (target->kind == "iscsi") {
    auto uri = ParseIscsiUri(target->path);
    if (!uri.ok()) return TargetError(source, kind_node, *target, std::string(uri.status().message()));
    if (!target->tls.certificates.empty() || !target->tls.psk_file.empty()) {
      return TargetError(source, body, *target, "'tls' applies to nbd targets, not iscsi");
    }
    return absl::OkStatus();
  }
  auto uri = ParseNbdUri(target->path);
  if (!uri.ok()) return TargetError(source, kind_node, *target, std::string(uri.status().message()));
  if (!target->chap.user.empty() || !target->chap.initiator.empty()) {
    return TargetError(source, body, *target, "'chap' applies to iscsi targets, not nbd");
  }
  const bool tls_configured = !target->tls.certificates.empty() || !target->tls.psk_file.empty();
  if (tls_configured && !uri->tls) {
    return TargetError(source, kind_node, *target,
                       common::StrCat("'tls' is configured but the URI '", target->path,
                                      "' does not ask for TLS; write nbds:// (or nbds+unix://)"));
  }
  return absl::OkStatus();
}

// Fills in `target` from its map: exactly one of dir, block, aoe, null, nbd or iscsi, plus
// size, disposable, tls and chap where they apply.
Status ParseTarget(const YAML::Node& body, std::string_view source, TargetConfig* target) {
  YAML::Node kind_node;
  // A default YAML::Node counts as defined: whether each was given is kept apart.
  YAML::Node tls_node, chap_node;
  YAML::Node timeout_node, strict_node;
  bool has_tls = false, has_chap = false, has_timeout = false, has_strict = false;
  for (const auto& field : body) {
    const std::string key = field.first.as<std::string>();
    const YAML::Node value = field.second;
    if (key == "tls") {
      tls_node.reset(value);
      has_tls = true;
      continue;
    }
    if (key == "chap") {
      chap_node.reset(value);
      has_chap = true;
      continue;
    }
    if (key != "dir" && key != "block" && key != "aoe" && key != "null" && key != "nbd" &&
        key != "iscsi" && key != "size" && key != "disposable" && key != "io_timeout" &&
        key != "connect_timeout" && key != "strict_modes") {
      return TargetError(source, field.first, *target,
                         common::StrCat("unknown field '", key,
                                        "' (known: dir, block, aoe, null, nbd, iscsi, size, "
                                        "disposable, io_timeout, connect_timeout, tls, chap, "
                                        "strict_modes)"));
    }
    if (!value.IsScalar()) {
      return TargetError(source, value, *target,
                         common::StrCat("'", key, "' must be ",
                                        key == "dir" || key == "block" ? "a path"
                                        : key == "aoe"                 ? "aoe://IFACE/SHELF.SLOT"
                                        : key == "nbd" || key == "iscsi" ? "a URI"
                                                                         : "a value"));
    }
    const std::string text = value.as<std::string>();
    if (key == "size") {
      auto size = common::ParseSize(text);
      if (!size.ok()) return TargetError(source, value, *target, std::string(size.status().message()));
      target->size = *size;
      if (target->size == 0) return TargetError(source, value, *target, "size must be above 0");
      continue;
    }
    if (key == "disposable") {
      auto disposable = common::ParseBool(key, text);
      if (!disposable.ok()) return TargetError(source, value, *target, std::string(disposable.status().message()));
      target->disposable = *disposable;
      continue;
    }
    if (key == "strict_modes") {
      auto strict = common::ParseBool(key, text);
      if (!strict.ok()) return TargetError(source, value, *target, std::string(strict.status().message()));
      target->strict_modes = *strict;
      strict_node.reset(field.first);
      has_strict = true;
      continue;
    }
    if (key == "io_timeout" || key == "connect_timeout") {
      auto nanos = common::ParseDurationOf(key, text);
      if (!nanos.ok()) return TargetError(source, value, *target, std::string(nanos.status().message()));
      if (*nanos < kMinNetTimeoutNanos || *nanos > kMaxNetTimeoutNanos) {
        return TargetError(source, value, *target,
                           common::StrCat("'", key, "' must be between 100ms and 1h"));
      }
      (key == "io_timeout" ? target->io_timeout_nanos : target->connect_timeout_nanos) = *nanos;
      timeout_node.reset(field.first);
      has_timeout = true;
      continue;
    }
    if (!target->kind.empty()) {
      return TargetError(source, field.first, *target,
                         common::StrCat("has both '", target->kind, "' and '", key,
                                        "'; a target is one of dir, block, aoe, null, nbd or "
                                        "iscsi"));
    }
    target->kind = key;
    kind_node = value;
    if (key == "null") {
      auto on = common::ParseBool(key, text);
      if (!on.ok() || !*on) {
        return TargetError(source, value, *target, "write 'null: true' for the null device");
      }
    } else {
      target->path = text;
    }
  }
  if (target->kind.empty()) {
    return ErrorAt(source, body.Mark(),
                   common::StrCat("target '", target->name,
                                  "' needs one of 'dir: PATH', 'block: PATH', "
                                  "'aoe: aoe://IFACE/SHELF.SLOT', 'null: true', 'nbd: URI' or "
                                  "'iscsi: URI'"));
  }
  if (has_tls) RETURN_IF_ERROR(ParseNbdTls(source, tls_node, target));
  if (has_chap) RETURN_IF_ERROR(ParseChap(source, chap_node, target));
  if ((has_tls || has_chap) && !target->is_network()) {
    return TargetError(source, has_tls ? tls_node : chap_node, *target,
                       "'tls' and 'chap' apply to nbd and iscsi targets only");
  }
  if (has_timeout && !target->is_remote()) {
    return TargetError(source, timeout_node, *target,
                       "'io_timeout' and 'connect_timeout' apply to aoe, nbd and iscsi targets only");
  }
  if (has_strict && target->kind != "dir" && target->kind != "block") {
    return TargetError(source, strict_node, *target,
                       "'strict_modes' applies to dir and block targets only");
  }
  if (target->is_network()) return CheckNetTarget(source, body, kind_node, target);
  if (target->kind == "null") {
    if (target->size == 0) target->size = kDefaultNullSize;
    return absl::OkStatus();
  }
  if (target->kind == "aoe") {
    // The target itself is found when a phase opens it: it may be switched on later.
    auto address = aoe::ParseAoeAddress(target->path);
    if (!address.ok()) {
      return TargetError(source, kind_node, *target, std::string(address.status().message()));
    }
    return absl::OkStatus();
  }
  if (target->path.empty() || target->path.front() != '/') {
    return TargetError(source, kind_node, *target,
                       common::StrCat(target->kind, " '", target->path,
                                      "' must be an absolute path"));
  }
  if (target->kind == "block") return CheckBlockPath(source, kind_node, target);
  if (target->size != 0 || target->disposable) {
    return TargetError(source, body, *target,
                       "'size' and 'disposable' apply to block, aoe, null, nbd and iscsi "
                       "targets, not dir");
  }
  struct stat st;
  if (stat(target->path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return TargetError(source, kind_node, *target,
                       common::StrCat("directory ", target->path, " does not exist"));
  }
  return absl::OkStatus();
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
      return ErrorAt(source, body.Mark(),
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
