#include "agent/targets/aoe/aoe_kind.h"

#include <algorithm>

#include "agent/devices/aoe/aoe_address.h"
#include "agent/devices/aoe/aoe_device.h"
#include "agent/devices/aoe/packet_link.h"
#include "agent/devices/write_guard.h"
#include "agent/targets/block/block_target.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

constexpr std::string_view kTransport = "AoE";

common::Status Parse(const TargetYaml& yaml, TargetConfig* target) {
  target->path = yaml.value.as<std::string>();
  // The target itself is found when a phase opens it: it may be switched on later.
  auto address = aoe::ParseAoeAddress(target->path);
  if (!address.ok())
    return yaml.Error(yaml.value, *target, std::string(address.status().message()));
  return absl::OkStatus();
}

// Discovers the target, which takes up to the discovery timeout when it does not answer.
// Writing needs `disposable: true`, and a target that holds no signature.
common::StatusOr<std::unique_ptr<Device>> OpenDevice(BlockTarget& block,
                                                     const BlockOpenOptions& options,
                                                     const std::atomic<bool>& cancelled,
                                                     std::vector<std::string>* /*warnings*/) {
  const TargetConfig& target = block.config();
  if (options.write) RETURN_IF_ERROR(CheckDisposable(target));
  const std::string context = common::StrCat("target '", target.name, "'");
  auto address = aoe::ParseAoeAddress(target.path);
  if (!address.ok()) return common::Annotate(address.status(), context);
  aoe::AoeDeviceOptions device_options;
  device_options.writable = options.write;
  device_options.size = target.size;
  device_options.timers.cancelled = &cancelled;
  if (target.io_timeout_nanos > 0)
    device_options.timers.request_timeout_nanos = target.io_timeout_nanos;
  if (target.connect_timeout_nanos > 0) {
    device_options.timers.discovery_timeout_nanos = target.connect_timeout_nanos;
  }
  auto device = aoe::AoeDevice::Open(
      *address, device_options, aoe::PacketLinkFactory(address->interface), common::SystemClock());
  if (!device.ok()) return common::Annotate(device.status(), context);
  if (options.write) RETURN_IF_ERROR(CheckRemoteHoldsNoData(target, **device));
  return std::unique_ptr<Device>(std::move(*device));
}

// What a short discovery finds. A target that does not answer costs this call at most
// kProbeNanos.
void ReadFacts(const TargetConfig& target, const SystemPaths& /*paths*/, int /*resolved*/,
               stormark::v1::TargetInfo* info) {
  constexpr int64_t kProbeNanos = 300'000'000;
  info->set_disposable(target.disposable);
  info->set_logical_block_size(aoe::kSectorSize);
  info->set_transport(std::string(kTransport));
  auto address = aoe::ParseAoeAddress(target.path);
  if (!address.ok()) {
    info->set_transport_detail(std::string(address.status().message()));
    return;
  }
  auto params = aoe::ProbeAoeTarget(*address, kProbeNanos);
  if (!params.ok()) {
    info->set_transport_detail(common::StrCat("user-space AoE initiator on ", address->interface,
                                              ", shelf ", address->shelf, " slot ", address->slot,
                                              ": ", params.status().message()));
    info->set_size_bytes(target.size);
    return;
  }
  info->set_transport_detail(params->Describe());
  const uint64_t capacity = params->identify.sectors * aoe::kSectorSize;
  info->set_size_bytes(target.size != 0 ? std::min(target.size, capacity) : capacity);
}

}  // namespace

const TargetKind& AoeTargetKind() {
  static const TargetKind kind = {
      .name = "aoe",
      .value = "aoe://IFACE/SHELF.SLOT",
      .keys = {"size", "disposable", "io_timeout", "connect_timeout"},
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
