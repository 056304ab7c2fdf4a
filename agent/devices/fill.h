// Laying out data before a phase reads it: a read of a block that was never written (a hole,
// or a preallocated extent) is answered by the filesystem without touching the disk.
#ifndef STORMARK_AGENT_DEVICES_FILL_H_
#define STORMARK_AGENT_DEVICES_FILL_H_

#include <atomic>
#include <cstdint>

#include "agent/devices/device.h"
#include "common/status.h"

namespace stormark::agent {

// Writes [begin, end) of `device` with incompressible data that no two 4 KiB blocks share
// (random bytes, each 4 KiB stamped with its offset), in requests of up to 1 MiB, then
// flushes. `begin` and `end` must be multiples of the device's alignment. Returns CANCELLED
// soon after `cancelled` is set.
common::Status FillRandom(Device& device, uint64_t begin, uint64_t end, uint64_t seed,
                          const std::atomic<bool>& cancelled);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_FILL_H_
