// The trim workload's rules, shared by the controller (which checks a plan before anything runs)
// and the agent (which trusts nothing it receives): its limits, its checks and its memory.
#ifndef STORMARK_COMMON_WORKLOADS_TRIM_TRIM_SPEC_H_
#define STORMARK_COMMON_WORKLOADS_TRIM_TRIM_SPEC_H_

#include <cstdint>

#include "common/memory_estimate.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// Discards are whole 4 KiB pages: what every device that discards at all accepts, and what a
// file's hole is punched in.
inline constexpr uint64_t kTrimAlignment = 4096;
// bs when the spec gives none: a typical discard granularity of an SSD's erase block.
inline constexpr uint64_t kTrimDefaultBs = 1 << 20;
// The largest request: the kernel splits larger ones anyway.
inline constexpr uint64_t kMaxTrimBs = uint64_t{1} << 30;

// The first problem with a trim spec, as one line naming the parameter, or OK.
Status CheckTrimSpec(const stormark::v1::TrimSpec& spec);

// trim: the order of its requests when random (8 bytes per request of the region) and its
// recorder. `region_bytes` is the region's size when the spec gives none (the device's size;
// 0 when not known yet, and then the order is counted for a 16 TiB device).
MemoryEstimate EstimateMemory(const stormark::v1::TrimSpec& spec, uint64_t region_bytes);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_WORKLOADS_TRIM_TRIM_SPEC_H_
