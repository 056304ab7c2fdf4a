#include "agent/targets/net_target.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "agent/devices/iscsi_device.h"
#include "agent/devices/nbd_device.h"
#include "agent/devices/net_uri.h"
#include "agent/devices/write_guard.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

// A GetInfo that finds a target never reached connects with this bound.
constexpr int64_t kProbeTimeoutNanos = 3'000'000'000;
constexpr int64_t kProbeRetryNanos = 60'000'000'000;

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
        "target '", target.name, "': chap.password_file ", target.chap.password_file,
        " is empty"));
  }
  return secret;
}

common::StatusOr<std::unique_ptr<Device>> Open(const TargetConfig& target, bool write,
                                               const std::atomic<bool>* cancelled,
                                               int64_t connect_timeout_nanos) {
  NetOptions net;
  net.cancelled = cancelled;
  if (target.io_timeout_nanos > 0) net.timeout_nanos = target.io_timeout_nanos;
  if (target.kind == "nbd") {
    NbdDeviceOptions options;
    options.uri = target.path;
    options.tls = {target.tls.certificates, target.tls.psk_file,
                   target.tls.psk_file.empty() || !target.tls.username.empty()
                       ? target.tls.username
                       : std::string("stormark")};
    options.writable = write;
    options.size = target.size;
    options.net = net;
    options.connect_timeout_nanos = connect_timeout_nanos;
    ASSIGN_OR_RETURN(auto device, NbdDevice::Open(options));
    return std::unique_ptr<Device>(std::move(device));
  }
  IscsiDeviceOptions options;
  options.uri = target.path;
  options.chap.user = target.chap.user;
  if (!target.chap.user.empty()) {
    ASSIGN_OR_RETURN(options.chap.password, ReadSecret(target));
  }
  options.initiator = target.chap.initiator;
  options.writable = write;
  options.size = target.size;
  options.net = net;
  options.connect_timeout_nanos = connect_timeout_nanos;
  ASSIGN_OR_RETURN(auto device, IscsiDevice::Open(options));
  return std::unique_ptr<Device>(std::move(device));
}

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
                                                        const std::atomic<bool>& cancelled) {
  if (!target.is_network()) {
    return absl::InvalidArgumentError(common::StrCat(
        "target '", target.name, "' is a ", target.kind, " target, not nbd or iscsi"));
  }
  if (write) RETURN_IF_ERROR(CheckDisposable(target));
  const int64_t connect_timeout = target.connect_timeout_nanos > 0
                                      ? target.connect_timeout_nanos
                                      : NbdDeviceOptions{}.connect_timeout_nanos;
  auto device = Open(target, write, &cancelled, connect_timeout);
  Remember(target, device);
  if (!device.ok()) {
    return common::Annotate(device.status(), common::StrCat("target '", target.name, "'"));
  }
  if (write) RETURN_IF_ERROR(CheckRemoteHoldsNoData(target, **device));
  return device;
}

std::string NetTransportDetail(const TargetConfig& target) {
  if (target.kind == "nbd") {
    auto uri = ParseNbdUri(target.path);
    if (!uri.ok()) return "user-space NBD client";
    return common::StrCat("user-space NBD client to ", uri->Endpoint(), " export '",
                          uri->export_name, "'", uri->tls ? " (TLS)" : "");
  }
  auto uri = ParseIscsiUri(target.path);
  if (!uri.ok()) return "user-space iSCSI initiator";
  return common::StrCat("user-space iSCSI initiator to ", uri->Portal(), " target ", uri->iqn,
                        " LUN ", uri->lun, target.chap.user.empty() ? "" : " (CHAP)");
}

void ReadNetTargetFacts(const TargetConfig& target, stormark::v1::TargetInfo* info) {
  info->set_disposable(target.disposable);
  info->set_transport(target.kind == "nbd" ? "NBD" : "iSCSI");
  info->set_transport_detail(NetTransportDetail(target));
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
    Remember(target, Open(target, /*write=*/false, nullptr, timeout));
  }
  absl::MutexLock lock(&target.cache->mu);
  info->set_size_bytes(target.cache->size);
  info->set_logical_block_size(target.cache->block_size);
}

}  // namespace stormark::agent
