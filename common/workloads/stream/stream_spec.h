// The stream workload's rules, shared by the controller (which checks a plan before anything runs)
// and the agent (which trusts nothing it receives): its limits, its checks and its memory.
#ifndef STORMARK_COMMON_WORKLOADS_STREAM_STREAM_SPEC_H_
#define STORMARK_COMMON_WORKLOADS_STREAM_STREAM_SPEC_H_

#include <cstdint>

#include "common/memory_estimate.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// The first problem with a stream spec, as one line ("stream: size 10M is not a multiple of
// bs 3k"), or OK.
Status CheckStreamSpec(const stormark::v1::StreamSpec& spec);

// stream: its one block buffer.
MemoryEstimate EstimateMemory(const stormark::v1::StreamSpec& spec);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_WORKLOADS_STREAM_STREAM_SPEC_H_
