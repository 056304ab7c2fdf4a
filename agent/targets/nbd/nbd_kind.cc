#include "agent/targets/nbd/nbd_kind.h"

#include "agent/devices/nbd_device.h"
#include "agent/devices/net_uri.h"
#include "agent/targets/block/block_target.h"
#include "agent/targets/net/net_target.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

constexpr std::string_view kTransport = "NBD";

common::Status ParseTls(const TargetYaml& yaml, const YAML::Node& node, TargetConfig* target) {
  ASSIGN_OR_RETURN(auto fields, SettingsMap(yaml, node, *target, "tls",
                                            {"certificates", "psk_file", "username"}));
  for (const auto& [key, value] : fields) {
    const std::string text = value.as<std::string>();
    if (key == "certificates") {
      RETURN_IF_ERROR(CheckPathField(yaml, value, *target, "tls.certificates", text, true));
      target->tls.certificates = text;
    } else if (key == "psk_file") {
      RETURN_IF_ERROR(CheckPathField(yaml, value, *target, "tls.psk_file", text, false));
      target->tls.psk_file = text;
    } else {
      target->tls.username = text;
    }
  }
  if (target->tls.certificates.empty() == target->tls.psk_file.empty()) {
    return yaml.Error(node, *target,
                      "'tls' needs exactly one of 'certificates: DIR' or 'psk_file: FILE'");
  }
  if (!target->tls.username.empty() && target->tls.psk_file.empty()) {
    return yaml.Error(node, *target, "'tls.username' goes with 'psk_file'");
  }
  return absl::OkStatus();
}

// A URI the agent's client can use, and TLS settings that fit it.
common::Status Parse(const TargetYaml& yaml, TargetConfig* target) {
  target->path = yaml.value.as<std::string>();
  target->cache = std::make_shared<NetTargetCache>();
  if (const YAML::Node tls = yaml.body["tls"]) RETURN_IF_ERROR(ParseTls(yaml, tls, target));
  auto uri = ParseNbdUri(target->path);
  if (!uri.ok()) return yaml.Error(yaml.value, *target, std::string(uri.status().message()));
  const bool tls_configured = !target->tls.certificates.empty() || !target->tls.psk_file.empty();
  if (tls_configured && !uri->tls) {
    return yaml.Error(yaml.value, *target,
                      common::StrCat("'tls' is configured but the URI '", target->path,
                                     "' does not ask for TLS; write nbds:// (or nbds+unix://)"));
  }
  return absl::OkStatus();
}

common::StatusOr<std::unique_ptr<Device>> Connect(const TargetConfig& target, bool write,
                                                  const std::atomic<bool>* cancelled,
                                                  int64_t connect_timeout_nanos) {
  NbdDeviceOptions options;
  options.uri = target.path;
  options.tls = {target.tls.certificates, target.tls.psk_file,
                 target.tls.psk_file.empty() || !target.tls.username.empty()
                     ? target.tls.username
                     : std::string("stormark")};
  options.writable = write;
  options.size = target.size;
  options.net.cancelled = cancelled;
  if (target.io_timeout_nanos > 0) options.net.timeout_nanos = target.io_timeout_nanos;
  options.connect_timeout_nanos = connect_timeout_nanos;
  ASSIGN_OR_RETURN(auto device, NbdDevice::Open(options));
  return std::unique_ptr<Device>(std::move(device));
}

common::StatusOr<std::unique_ptr<Device>> OpenDevice(BlockTarget& target,
                                                     const BlockOpenOptions& options,
                                                     const std::atomic<bool>& cancelled,
                                                     std::vector<std::string>* /*warnings*/) {
  return OpenNetTarget(target.config(), options.write, cancelled, Connect);
}

// "user-space NBD client to 127.0.0.1:10809 export 'x' (TLS)".
std::string Detail(const TargetConfig& target) {
  auto uri = ParseNbdUri(target.path);
  if (!uri.ok()) return "user-space NBD client";
  return common::StrCat("user-space NBD client to ", uri->Endpoint(), " export '", uri->export_name,
                        "'", uri->tls ? " (TLS)" : "");
}

void ReadFacts(const TargetConfig& target, const SystemPaths& /*paths*/, int /*resolved*/,
               stormark::v1::TargetInfo* info) {
  ReadNetTargetFacts(target, Connect, kTransport, Detail(target), info);
}

}  // namespace

const TargetKind& NbdTargetKind() {
  static const TargetKind kind = {
      .name = "nbd",
      .value = "URI",
      .keys = {"size", "disposable", "io_timeout", "connect_timeout", "tls"},
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
