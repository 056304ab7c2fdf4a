// The address of an AoE target as the agent's config names it: aoe://IFACE/SHELF.SLOT, for
// example aoe://eth1/1.0 (the kernel driver calls that target e1.0).
#ifndef STORMARK_AGENT_DEVICES_AOE_AOE_ADDRESS_H_
#define STORMARK_AGENT_DEVICES_AOE_AOE_ADDRESS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::agent::aoe {

struct AoeAddress {
  std::string interface;
  uint16_t shelf = 0;  // 0 to 65534 (65535 means every shelf)
  uint8_t slot = 0;    // 0 to 254 (255 means every slot)

  // "aoe://eth1/1.0".
  std::string ToString() const;
};

// Parses "aoe://IFACE/SHELF.SLOT"; the error says which part is wrong.
common::StatusOr<AoeAddress> ParseAoeAddress(std::string_view text);

}  // namespace stormark::agent::aoe

#endif  // STORMARK_AGENT_DEVICES_AOE_AOE_ADDRESS_H_
