// The bonnie workload's rules, shared by the controller (which checks a plan before anything runs)
// and the agent (which trusts nothing it receives): its limits, its checks and its memory.
#ifndef STORMARK_COMMON_WORKLOADS_BONNIE_BONNIE_SPEC_H_
#define STORMARK_COMMON_WORKLOADS_BONNIE_BONNIE_SPEC_H_

#include <cstdint>

#include "common/memory_estimate.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// Limits of a bonnie spec: seeker threads, and bonnie++'s own limit on directories.
inline constexpr uint32_t kMaxBonnieSeekers = 1024;
inline constexpr uint32_t kMaxBonnieFileDirs = 99999;

// The first problem with a bonnie spec, as one line naming the field, or OK.
Status CheckBonnieSpec(const stormark::v1::BonnieSpec& spec);

// bonnie++'s defaults of chunk and seekers (agent/workloads/bonnie_common.h).
inline constexpr uint32_t kBonnieDefaultChunk = 8192;
inline constexpr uint32_t kBonnieDefaultSeekers = 5;

// A bonnie file name: a std::string (32 bytes) holding up to 28 characters on
// the heap (a 48-byte block), and its directory number.
inline constexpr uint64_t kBonnieBytesPerName = 96;

// bonnie: the I/O tests' chunk buffers (one, plus one per seeker) and the
// seekers' histograms, and the file tests' names (files x a name's bytes, in
// the test's list and in the phase directory's record).
MemoryEstimate EstimateMemory(const stormark::v1::BonnieSpec& spec);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_WORKLOADS_BONNIE_BONNIE_SPEC_H_
