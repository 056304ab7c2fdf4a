// The command workload's rules, shared by the controller (which checks a plan before anything runs)
// and the agent (which trusts nothing it receives): its limits, its checks and its memory.
#ifndef STORMARK_COMMON_WORKLOADS_COMMAND_COMMAND_SPEC_H_
#define STORMARK_COMMON_WORKLOADS_COMMAND_COMMAND_SPEC_H_

#include <cstdint>

#include "common/memory_estimate.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// Limits of a command spec: arguments and their total size.
inline constexpr int kMaxCommandArgs = 4096;
inline constexpr size_t kMaxCommandBytes = 128 * 1024;

// The first problem with a command spec (neither or both of argv and shell, too long), or OK.
Status CheckCommandSpec(const stormark::v1::CommandSpec& spec);

// command: the command line and the output tails kept (the child's own memory
// is the child's).
MemoryEstimate EstimateMemory(const stormark::v1::CommandSpec& spec);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_WORKLOADS_COMMAND_COMMAND_SPEC_H_
