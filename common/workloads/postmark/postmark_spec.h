// The postmark workload's rules, shared by the controller (which checks a plan before anything
// runs) and the agent (which trusts nothing it receives): its limits, its checks and its memory.
#ifndef STORMARK_COMMON_WORKLOADS_POSTMARK_POSTMARK_SPEC_H_
#define STORMARK_COMMON_WORKLOADS_POSTMARK_POSTMARK_SPEC_H_

#include <cstdint>

#include "common/memory_estimate.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// Limits of a postmark spec. PostMark keeps a table of 2 x number files in memory and a
// buffer of max size bytes; the agent does the same, so both are bounded.
inline constexpr uint32_t kMaxPostmarkFiles = 10'000'000;
inline constexpr uint64_t kMaxPostmarkFileSize = 256ull << 20;
inline constexpr uint32_t kMaxPostmarkSubdirectories = 100'000;
inline constexpr uint32_t kMaxPostmarkSeed = 2147483647;  // PostMark's seed is a C int.

// PostMark 1.5's defaults, which a postmark spec's fields left at 0 (or unset) stand for.
inline constexpr uint32_t kPostmarkNumber = 500;
inline constexpr uint64_t kPostmarkMinSize = 500;
inline constexpr uint64_t kPostmarkMaxSize = 10000;
inline constexpr uint32_t kPostmarkTransactions = 500;
inline constexpr uint32_t kPostmarkBlockSize = 512;
inline constexpr int32_t kPostmarkBias = 5;
inline constexpr uint32_t kPostmarkSeed = 42;

// `spec` with every field left at 0 (or unset) set to PostMark's default (the report
// VERBOSE).
stormark::v1::PostmarkSpec WithPostmarkDefaults(stormark::v1::PostmarkSpec spec);

// The first problem with a postmark spec, as one line naming PostMark's setting, or OK.
Status CheckPostmarkSpec(const stormark::v1::PostmarkSpec& spec);

// A PostMark table slot: file number, size and directory.
inline constexpr uint64_t kPostmarkBytesPerSlot = 16;

// postmark: PostMark's file table (2 x number slots), the names of the files
// that may exist at once (the pool plus one per transaction, at most the
// table), the text files are written from (size high bound) and the read
// buffer.
MemoryEstimate EstimateMemory(const stormark::v1::PostmarkSpec& spec);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_WORKLOADS_POSTMARK_POSTMARK_SPEC_H_
