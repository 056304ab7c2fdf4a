#include "agent/devices/aoe/aoe_device.h"

#include <algorithm>
#include <cerrno>

#include "agent/devices/aoe/aoe_discovery.h"
#include "agent/devices/aoe/packet_link.h"
#include "common/strings.h"

namespace stormark::agent::aoe {

common::StatusOr<std::unique_ptr<AoeDevice>> AoeDevice::Open(const AoeAddress& address,
                                                             const AoeDeviceOptions& options,
                                                             LinkFactory links,
                                                             const common::Clock& clock) {
  ASSIGN_OR_RETURN(std::unique_ptr<FrameLink> link, links(std::nullopt));
  ASSIGN_OR_RETURN(AoeServerParams params,
                   Discover(*link, address, options.timers.discovery_timeout_nanos, clock,
                            options.timers.cancelled));
  const uint64_t capacity = params.identify.sectors * kSectorSize;
  if (options.size > capacity) {
    return absl::OutOfRangeError(
        common::StrCat(address.ToString(), ": the configured size ", common::StrCat(options.size),
                       " bytes is larger than the target (", capacity, " bytes)"));
  }
  const uint64_t size = options.size != 0 ? options.size / kSectorSize * kSectorSize : capacity;
  auto target = std::make_unique<AoeServer>(std::move(params), options.timers, clock);
  return std::unique_ptr<AoeDevice>(
      new AoeDevice(std::move(target), std::move(links), size, options.writable));
}

AoeDevice::AoeDevice(std::unique_ptr<AoeServer> target, LinkFactory links, uint64_t size,
                     bool writable)
    : target_(std::move(target)), links_(std::move(links)), size_(size), writable_(writable) {}

AoeDevice::~AoeDevice() { idle_.clear(); }

DeviceCaps AoeDevice::caps() const {
  DeviceCaps caps;
  caps.writable = writable_;
  caps.direct = true;  // no page cache between the workload and the target
  caps.alignment = kSectorSize;
  caps.async = true;
  return caps;
}

std::string AoeDevice::Describe() const {
  const AoeServerParams& p = target_->params();
  return common::StrCat(p.address.ToString(), " (user-space AoE initiator, e", p.address.shelf, ".",
                        p.address.slot, ", ", p.sectors_per_frame, " sectors/frame)");
}

common::StatusOr<std::unique_ptr<AoeQueue>> AoeDevice::NewQueue(uint32_t depth, uint32_t window) {
  const uint8_t session = target_->NextSessionId();
  ASSIGN_OR_RETURN(std::unique_ptr<FrameLink> link, links_(session));
  return std::make_unique<AoeQueue>(*target_, std::move(link), session, depth, window, size_,
                                    writable_);
}

common::StatusOr<std::unique_ptr<IoQueue>> AoeDevice::OpenQueue(uint32_t depth) {
  depth = std::max<uint32_t>(1, depth);
  const uint32_t window = std::min<uint32_t>(depth, target_->params().buffer_count);
  ASSIGN_OR_RETURN(std::unique_ptr<AoeQueue> queue, NewQueue(depth, window));
  return std::unique_ptr<IoQueue>(std::move(queue));
}

int64_t AoeDevice::Execute(const IoRequest& request) {
  std::unique_ptr<AoeQueue> queue;
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      queue = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!queue) {
    auto made = NewQueue(1, target_->params().buffer_count);
    if (!made.ok()) {
      target_->NoteFailure(request, std::string(made.status().message()));
      return -EIO;
    }
    queue = std::move(*made);
  }
  IoCompletion completion;
  int64_t result = -EIO;
  if (queue->Submit({&request, 1}).ok()) {
    auto reaped = queue->Reap(1, {&completion, 1}, -1);
    if (reaped.ok() && *reaped == 1) {
      result = completion.result;
    } else if (reaped.ok() && target_->options().is_cancelled()) {
      result = -ECANCELED;
    }
  }
  queue->CountDrops();
  // A queue left with a request in flight (the phase was cancelled) is dropped, not reused.
  if (queue->in_flight() > 0) return result;
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(queue));
  return result;
}

std::map<std::string, std::string> AoeDevice::Stats() const { return target_->Stats(); }

common::Status AoeDevice::RequestError(const IoRequest& request, int64_t result) const {
  const common::Status base = Device::RequestError(request, result);
  const std::string detail = result < 0 ? target_->FailureDetail(request) : "";
  if (detail.empty()) return base;
  return common::Status(base.code(), common::StrCat(base.message(), " (", detail, ")"));
}

common::StatusOr<AoeServerParams> ProbeAoeTarget(const AoeAddress& address, int64_t timeout_nanos) {
  ASSIGN_OR_RETURN(auto link, PacketLink::Open(address.interface, std::nullopt));
  return Discover(*link, address, timeout_nanos, common::SystemClock());
}

}  // namespace stormark::agent::aoe
