// A Device on an AoE target, reached with stormark's own user-space initiator (AoeQueue) over
// a raw Ethernet socket: no kernel AoE driver is involved, so the figures include the
// protocol's own latency.
//
// Open discovers the target (Query Config, IDENTIFY DEVICE) once. Each OpenQueue gets its own
// socket and session byte; `depth` bounds both the requests and the AoE frames (tags) the
// queue has in flight, and the target's buffer count bounds the frames of all queues
// together. The blocking calls (Execute) use up to the buffer count of frames for their one
// request, on sessions kept in a small pool; they are safe for concurrent use.
#ifndef STORMARK_AGENT_DEVICES_AOE_AOE_DEVICE_H_
#define STORMARK_AGENT_DEVICES_AOE_AOE_DEVICE_H_

#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/devices/aoe/aoe_address.h"
#include "agent/devices/aoe/aoe_queue.h"
#include "agent/devices/aoe/aoe_server.h"
#include "agent/devices/aoe/frame_link.h"
#include "agent/devices/device.h"
#include "common/clock.h"

namespace stormark::agent::aoe {

struct AoeDeviceOptions {
  bool writable = false;
  // Bytes workloads may address; 0 means the whole target.
  uint64_t size = 0;
  AoeOptions timers;
};

class AoeDevice final : public Device {
 public:
  // Discovers the target at `address` through links from `links`. `clock` must outlive the
  // device.
  static common::StatusOr<std::unique_ptr<AoeDevice>> Open(const AoeAddress& address,
                                                           const AoeDeviceOptions& options,
                                                           LinkFactory links,
                                                           const common::Clock& clock);
  ~AoeDevice() override;

  uint64_t size() const override { return size_; }
  uint32_t block_size() const override { return kSectorSize; }
  DeviceCaps caps() const override;
  // "aoe://veth0/1.0 (user-space AoE initiator, e1.0, 2 sectors/frame)".
  std::string Describe() const override;
  int64_t Execute(const IoRequest& request) override;
  common::StatusOr<std::unique_ptr<IoQueue>> OpenQueue(uint32_t depth) override;
  std::map<std::string, std::string> Stats() const override;
  // Adds the initiator's reason (AoE error, ATA registers, no reply) to the base error.
  common::Status RequestError(const IoRequest& request, int64_t result) const override;

  const AoeServerParams& params() const { return target_->params(); }

 private:
  AoeDevice(std::unique_ptr<AoeServer> target, LinkFactory links, uint64_t size, bool writable);
  common::StatusOr<std::unique_ptr<AoeQueue>> NewQueue(uint32_t depth, uint32_t window);

  const std::unique_ptr<AoeServer> target_;
  const LinkFactory links_;
  const uint64_t size_;
  const bool writable_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<AoeQueue>> idle_ ABSL_GUARDED_BY(mu_);  // Queues for Execute.
};

// The target's facts for TargetInfo: found with a short discovery (at most `timeout_nanos`).
common::StatusOr<AoeServerParams> ProbeAoeTarget(const AoeAddress& address, int64_t timeout_nanos);

}  // namespace stormark::agent::aoe

#endif  // STORMARK_AGENT_DEVICES_AOE_AOE_DEVICE_H_
