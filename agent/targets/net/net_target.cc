#include "agent/targets/net/net_target.h"

#include <sys/stat.h>

#include <algorithm>

#include "agent/devices/nbd_device.h"
#include "agent/devices/net_queue.h"
#include "agent/devices/write_guard.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

// A GetInfo that finds a target never reached connects with this bound.
constexpr int64_t kProbeTimeoutNanos = 3'000'000'000;
constexpr int64_t kProbeRetryNanos = 60'000'000'000;

void Remember(const TargetConfig& target, const common::StatusOr<std::unique_ptr<Device>>& device) {
  if (target.cache == nullptr) return;
  absl::MutexLock lock(&target.cache->mu);
  if (device.ok()) {
    target.cache->size = (*device)->size();
    target.cache->block_size = (*device)->block_size();
    target.cache->error.clear();
  } else {
    target.cache->failed_at_nanos = NetNowNanos();
    target.cache->error = std::string(device.status().message());
  }
}

}  // namespace

common::StatusOr<std::unique_ptr<Device>> OpenNetTarget(const TargetConfig& target, bool write,
                                                        const std::atomic<bool>& cancelled,
                                                        NetConnect connect) {
  if (write) RETURN_IF_ERROR(CheckDisposable(target));
  const int64_t connect_timeout = target.connect_timeout_nanos > 0
                                      ? target.connect_timeout_nanos
                                      : NbdDeviceOptions{}.connect_timeout_nanos;
  auto device = connect(target, write, &cancelled, connect_timeout);
  Remember(target, device);
  if (!device.ok()) {
    return common::Annotate(device.status(), common::StrCat("target '", target.name, "'"));
  }
  if (write) RETURN_IF_ERROR(CheckRemoteHoldsNoData(target, **device));
  return device;
}

void ReadNetTargetFacts(const TargetConfig& target, NetConnect connect, std::string_view transport,
                        std::string detail, stormark::v1::TargetInfo* info) {
  info->set_disposable(target.disposable);
  info->set_transport(std::string(transport));
  info->set_transport_detail(std::move(detail));
  if (target.cache == nullptr) return;
  bool probe = false;
  {
    absl::MutexLock lock(&target.cache->mu);
    probe = target.cache->size == 0 &&
            (target.cache->failed_at_nanos == 0 ||
             NetNowNanos() - target.cache->failed_at_nanos > kProbeRetryNanos);
  }
  if (probe) {
    const int64_t timeout = target.connect_timeout_nanos > 0
                                ? std::min(target.connect_timeout_nanos, kProbeTimeoutNanos)
                                : kProbeTimeoutNanos;
    Remember(target, connect(target, /*write=*/false, nullptr, timeout));
  }
  absl::MutexLock lock(&target.cache->mu);
  info->set_size_bytes(target.cache->size);
  info->set_logical_block_size(target.cache->block_size);
}

common::Status CheckPathField(const TargetYaml& yaml, const YAML::Node& node,
                              const TargetConfig& target, std::string_view field,
                              const std::string& path, bool directory) {
  struct stat st;
  if (path.empty() || path.front() != '/') {
    return yaml.Error(node, target,
                      common::StrCat(field, " '", path, "' must be an absolute path"));
  }
  if (stat(path.c_str(), &st) != 0 || (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
    return yaml.Error(
        node, target,
        common::StrCat(field, " ", path, " is not an existing ", directory ? "directory" : "file"));
  }
  return absl::OkStatus();
}

common::StatusOr<std::vector<std::pair<std::string, YAML::Node>>> SettingsMap(
    const TargetYaml& yaml, const YAML::Node& node, const TargetConfig& target,
    std::string_view name, std::initializer_list<std::string_view> known) {
  std::string list;
  for (std::string_view k : known) list += common::StrCat(list.empty() ? "" : ", ", k);
  if (!node.IsMap()) {
    return yaml.Error(node, target, common::StrCat("'", name, "' must be a map of ", list));
  }
  std::vector<std::pair<std::string, YAML::Node>> fields;
  for (const auto& field : node) {
    const std::string key = field.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return yaml.Error(field.first, target,
                        common::StrCat("unknown field '", name, ".", key, "' (known: ", list, ")"));
    }
    if (!field.second.IsScalar() || field.second.as<std::string>().empty()) {
      return yaml.Error(field.second, target,
                        common::StrCat("'", name, ".", key, "' must be a non-empty value"));
    }
    fields.emplace_back(key, field.second);
  }
  return fields;
}

}  // namespace stormark::agent
