// Finding an AoE target: a Query Config request to its shelf and slot (broadcast), whose reply
// gives the target's MAC address, firmware, buffer count and sector limit; then ATA IDENTIFY
// DEVICE for its capacity. Both are sent again with backoff until an answer comes or the
// timeout passes.
#ifndef STORMARK_AGENT_DEVICES_AOE_AOE_DISCOVERY_H_
#define STORMARK_AGENT_DEVICES_AOE_AOE_DISCOVERY_H_

#include <atomic>

#include "agent/devices/aoe/aoe_address.h"
#include "agent/devices/aoe/aoe_server.h"
#include "agent/devices/aoe/frame_link.h"
#include "common/clock.h"

namespace stormark::agent::aoe {

// The target at `address`, reached through `link` (a link without a session filter).
// NOT_FOUND when nothing answers within `timeout_nanos`; the target's own errors
// (AoE error codes, ATA status) otherwise; CANCELLED within kCancelSliceNanos of `cancelled`
// being set (it may be null).
common::StatusOr<AoeServerParams> Discover(FrameLink& link, const AoeAddress& address,
                                           int64_t timeout_nanos, const common::Clock& clock,
                                           const std::atomic<bool>* cancelled = nullptr);

}  // namespace stormark::agent::aoe

#endif  // STORMARK_AGENT_DEVICES_AOE_AOE_DISCOVERY_H_
