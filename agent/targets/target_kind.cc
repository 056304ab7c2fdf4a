#include "agent/targets/target_kind.h"

#include <algorithm>

#include "agent/targets/block/block_target.h"
#include "agent/config/yaml_error.h"
#include "common/strings.h"

namespace stormark::agent {

common::Status TargetYaml::Error(const YAML::Node& node, const TargetConfig& target,
                                 std::string_view what) const {
  return YamlErrorAt(source, node, common::StrCat("target '", target.name, "': ", what));
}

common::Status ParseLocalPath(const TargetYaml& yaml, TargetConfig* target) {
  target->path = yaml.value.as<std::string>();
  if (target->path.empty() || target->path.front() != '/') {
    return yaml.Error(
        yaml.value, *target,
        common::StrCat(target->kind, " '", target->path, "' must be an absolute path"));
  }
  return absl::OkStatus();
}

const std::vector<std::string_view>& SharedTargetKeys() {
  static const std::vector<std::string_view> keys = {
      "size", "disposable", "io_timeout", "connect_timeout", "strict_modes", "device"};
  return keys;
}

const TargetKind* FindTargetKind(std::string_view name) {
  for (const TargetKind* kind : TargetKinds()) {
    if (kind->name == name) return kind;
  }
  return nullptr;
}

std::string TargetKindNames() {
  std::string names;
  for (const TargetKind* kind : TargetKinds()) {
    names += common::StrCat(names.empty() ? "" : ", ", kind->name);
  }
  return names;
}

std::string KindsTaking(std::string_view key) {
  std::vector<std::string_view> names;
  for (const TargetKind* kind : TargetKinds()) {
    if (std::find(kind->keys.begin(), kind->keys.end(), key) != kind->keys.end()) {
      names.push_back(kind->name);
    }
  }
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    list += common::StrCat(i == 0 ? "" : i + 1 == names.size() ? " and " : ", ", names[i]);
  }
  return list;
}

common::StatusOr<std::unique_ptr<Device>> OpenTargetDevice(BlockTarget& target,
                                                           const BlockOpenOptions& options,
                                                           const std::atomic<bool>& cancelled,
                                                           std::vector<std::string>* warnings) {
  const TargetConfig& config = target.config();
  const TargetKind* kind = FindTargetKind(config.kind);
  if (kind == nullptr || kind->open_device == nullptr) {
    return absl::InvalidArgumentError(common::StrCat(
        "target '", config.name, "' is a ", config.kind, " target, which has no device to open"));
  }
  return kind->open_device(target, options, cancelled, warnings);
}

common::Status CheckTargetOwner(const TargetConfig& target, uid_t agent_uid) {
  const TargetKind* kind = FindTargetKind(target.kind);
  if (kind == nullptr || kind->check_ownership == nullptr) return absl::OkStatus();
  return kind->check_ownership(target, agent_uid);
}

}  // namespace stormark::agent
