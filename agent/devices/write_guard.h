// The interlocks in front of every write to a block target. A workload that writes (or lays
// out data) may open a block target only when all of these hold:
//   1. the agent's config marks the target `disposable: true`;
//   2. for a raw block device: neither it nor any of its partitions is mounted or used as
//      swap, and nothing is stacked on it (md, device mapper, LVM: /sys/.../holders);
//   3. for a raw block device, and for an AoE, NBD or iSCSI target: it holds no filesystem,
//      partition table, RAID, LVM or other signature (signatures.h);
//   4. for a raw block device: the kernel grants an exclusive open (O_EXCL), which it refuses
//      while anything else holds the device (FileDeviceOptions::exclusive).
// Reads need none of these: read-only workloads run on any configured target.
#ifndef STORMARK_AGENT_DEVICES_WRITE_GUARD_H_
#define STORMARK_AGENT_DEVICES_WRITE_GUARD_H_

#include <string>
#include <vector>

#include "agent/config.h"
#include "agent/devices/device.h"
#include "common/status.h"

namespace stormark::agent {

// Why writing to `target` (a block target) is refused, as PERMISSION_DENIED or
// FAILED_PRECONDITION naming the target, the path and the reason; OK when it may be written.
// Checks 1 to 3 above.
common::Status CheckWritable(const TargetConfig& target);

// Check 3 for a target reached over the network (aoe, nbd, iscsi), read through `device`
// once it is open: FAILED_PRECONDITION naming what it holds, OK when it holds no signature.
common::Status CheckRemoteHoldsNoData(const TargetConfig& target, Device& device);

// Where the block device `path` (or a partition of it, or a device stacked on it) is in use:
// "/dev/loop3p1 is mounted at /mnt/x", "/dev/sdb is held by md0", "/dev/sdc2 is swap". Empty
// when nothing uses it. `mountinfo` and `swaps` are the texts of /proc/self/mountinfo and
// /proc/swaps (parameters, for tests).
std::vector<std::string> FindDeviceUsers(const std::string& path, const std::string& mountinfo,
                                         const std::string& swaps);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_WRITE_GUARD_H_
