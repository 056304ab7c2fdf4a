#include "agent/targets/iscsi/iscsi_kind.h"

#include <fstream>

#include "agent/devices/iscsi_device.h"
#include "agent/devices/net_uri.h"
#include "agent/targets/block/block_target.h"
#include "agent/targets/net/net_target.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

constexpr std::string_view kTransport = "iSCSI";

common::Status ParseChap(const TargetYaml& yaml, const YAML::Node& node, TargetConfig* target) {
  ASSIGN_OR_RETURN(auto fields, SettingsMap(yaml, node, *target, "chap",
                                            {"user", "password", "password_file", "initiator"}));
  for (const auto& [key, value] : fields) {
    const std::string text = value.as<std::string>();
    if (key == "user") {
      target->chap.user = text;
    } else if (key == "password") {
      target->chap.password = text;
    } else if (key == "password_file") {
      RETURN_IF_ERROR(CheckPathField(yaml, value, *target, "chap.password_file", text, false));
      target->chap.password_file = text;
    } else {
      if (!text.starts_with("iqn.") && !text.starts_with("eui.") && !text.starts_with("naa.")) {
        return yaml.Error(value, *target,
                          common::StrCat("chap.initiator '", text,
                                         "' is not an iSCSI name (iqn., eui. or naa.)"));
      }
      target->chap.initiator = text;
    }
  }
  const bool has_secret = !target->chap.password.empty() || !target->chap.password_file.empty();
  if (!target->chap.password.empty() && !target->chap.password_file.empty()) {
    return yaml.Error(node, *target, "'chap' takes 'password' or 'password_file', not both");
  }
  if (target->chap.user.empty() != !has_secret) {
    return yaml.Error(node, *target,
                      "'chap' needs both 'user' and one of 'password' or 'password_file'");
  }
  return absl::OkStatus();
}

// A URI the agent's initiator can use, and CHAP settings.
common::Status Parse(const TargetYaml& yaml, TargetConfig* target) {
  target->path = yaml.value.as<std::string>();
  target->cache = std::make_shared<NetTargetCache>();
  if (const YAML::Node chap = yaml.body["chap"]) RETURN_IF_ERROR(ParseChap(yaml, chap, target));
  auto uri = ParseIscsiUri(target->path);
  if (!uri.ok()) return yaml.Error(yaml.value, *target, std::string(uri.status().message()));
  return absl::OkStatus();
}

common::StatusOr<std::string> ReadSecret(const TargetConfig& target) {
  if (target.chap.password_file.empty()) return target.chap.password;
  std::ifstream in(target.chap.password_file);
  if (!in) {
    return common::ErrnoError(
        common::StrCat("target '", target.name, "': cannot read chap.password_file ",
                       target.chap.password_file),
        errno);
  }
  std::string secret;
  std::getline(in, secret);  // The first line; a trailing newline is not part of it.
  if (secret.empty()) {
    return absl::InvalidArgumentError(common::StrCat(
        "target '", target.name, "': chap.password_file ", target.chap.password_file, " is empty"));
  }
  return secret;
}

common::StatusOr<std::unique_ptr<Device>> Connect(const TargetConfig& target, bool write,
                                                  const std::atomic<bool>* cancelled,
                                                  int64_t connect_timeout_nanos) {
  IscsiDeviceOptions options;
  options.uri = target.path;
  options.chap.user = target.chap.user;
  if (!target.chap.user.empty()) {
    ASSIGN_OR_RETURN(options.chap.password, ReadSecret(target));
  }
  options.initiator = target.chap.initiator;
  options.writable = write;
  options.size = target.size;
  options.net.cancelled = cancelled;
  if (target.io_timeout_nanos > 0) options.net.timeout_nanos = target.io_timeout_nanos;
  options.connect_timeout_nanos = connect_timeout_nanos;
  ASSIGN_OR_RETURN(auto device, IscsiDevice::Open(options));
  return std::unique_ptr<Device>(std::move(device));
}

common::StatusOr<std::unique_ptr<Device>> OpenDevice(BlockTarget& target,
                                                     const BlockOpenOptions& options,
                                                     const std::atomic<bool>& cancelled,
                                                     std::vector<std::string>* /*warnings*/) {
  return OpenNetTarget(target.config(), options.write, cancelled, Connect);
}

// "user-space iSCSI initiator to 10.0.0.6:3260 target IQN LUN 0 (CHAP)".
std::string Detail(const TargetConfig& target) {
  auto uri = ParseIscsiUri(target.path);
  if (!uri.ok()) return "user-space iSCSI initiator";
  return common::StrCat("user-space iSCSI initiator to ", uri->Portal(), " target ", uri->iqn,
                        " LUN ", uri->lun, target.chap.user.empty() ? "" : " (CHAP)");
}

void ReadFacts(const TargetConfig& target, const SystemPaths& /*paths*/, int /*resolved*/,
               stormark::v1::TargetInfo* info) {
  ReadNetTargetFacts(target, Connect, kTransport, Detail(target), info);
}

}  // namespace

const TargetKind& IscsiTargetKind() {
  static const TargetKind kind = {
      .name = "iscsi",
      .value = "URI",
      .keys = {"size", "disposable", "io_timeout", "connect_timeout", "chap"},
      .caps = {.device = true, .remote = true},
      .transport = kTransport,
      .parse = Parse,
      .open_device = OpenDevice,
      .read_facts = ReadFacts,
      .check_ownership = nullptr,
  };
  return kind;
}

}  // namespace stormark::agent
