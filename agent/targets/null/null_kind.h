// The `null:` target kind: the null device (agent/devices/null_device.h), which moves no data
// and so measures stormark's own cost per I/O.
//
//   ceiling: {null: true, size: 1T}   # size: what workloads address (default 1 TiB)
#ifndef STORMARK_AGENT_TARGETS_NULL_NULL_KIND_H_
#define STORMARK_AGENT_TARGETS_NULL_NULL_KIND_H_

#include "agent/targets/target_kind.h"

namespace stormark::agent {

const TargetKind& NullTargetKind();

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_NULL_NULL_KIND_H_
