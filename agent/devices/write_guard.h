// The interlocks in front of every write to a block target. A workload that writes (or lays
// out data) may write a block target only when all of these hold:
//   1. the agent's config marks the target `disposable: true`;
//   2. for a raw block device: neither it nor any of its partitions is mounted or used as
//      swap, and nothing is stacked on it (md, device mapper, LVM: /sys/dev/block/MAJ:MIN/holders);
//   3. for a raw block device, and for an AoE, NBD or iSCSI target: it holds no filesystem,
//      partition table, RAID, LVM or other signature (signatures.h);
//   4. for a raw block device: the kernel grants an exclusive open (O_EXCL), which it refuses
//      while anything else holds the device (mounted, swap, stacked, another O_EXCL opener).
// Checks 2 and 3 of a local target are made on a descriptor, by what fstat says it refers to
// and by reading through it, never by a path: the descriptor checked is the one written
// through (agent/targets/block/block_target.h opens it, with O_EXCL for check 4).
// Reads need none of these: read-only workloads run on any configured target.
#ifndef STORMARK_AGENT_DEVICES_WRITE_GUARD_H_
#define STORMARK_AGENT_DEVICES_WRITE_GUARD_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/devices/device.h"
#include "common/status.h"

namespace stormark::agent {

// Check 1: PERMISSION_DENIED naming the target and its path unless its config marks it
// disposable.
common::Status CheckDisposable(const TargetConfig& target);

// Checks 2 and 3 on `fd`, the descriptor `target` is to be written through: for a block
// device (by fstat), its users and holders found by its number, and its signatures read
// through `fd` (whole aligned blocks, so an O_DIRECT descriptor will do). A read that fails
// refuses the write. OK for a regular file. FAILED_PRECONDITION naming the target, the path
// and the reason. `sys_dev_block` is /sys/dev/block except in tests.
common::Status CheckDescriptorWritable(const TargetConfig& target, int fd,
                                       const std::string& sys_dev_block = "/sys/dev/block");

// Check 3 for a target reached over the network (aoe, nbd, iscsi), read through `device`
// once it is open: FAILED_PRECONDITION naming what it holds, OK when it holds no signature.
common::Status CheckRemoteHoldsNoData(const TargetConfig& target, Device& device);

// The signatures (signatures.h) on the first `size` bytes of what `fd` refers to, read in
// whole blocks of `alignment` bytes (a power of two; the logical block size for an O_DIRECT
// descriptor) into an aligned buffer. An error when a read fails: then nothing can be said.
common::StatusOr<std::vector<std::string>> FindSignaturesThrough(int fd, uint64_t size,
                                                                 uint32_t alignment);

// Where the block device numbered `dev` (or a partition of it, or a device stacked on it) is
// in use: "/dev/loop3p1 is mounted at /mnt/x", "/dev/sdb is held by md0", "/dev/sdc2 is
// swap". `name` is what the device itself is called in them (its configured path); the
// others are /dev/ and their sysfs names. Empty when nothing uses it. Partitions and holders
// are found below `sys_dev_block`/MAJ:MIN; `mountinfo` and `swaps` are the texts of
// /proc/self/mountinfo and /proc/swaps (parameters, for tests).
std::vector<std::string> FindDeviceUsers(dev_t dev, const std::string& name,
                                         const std::string& mountinfo, const std::string& swaps,
                                         const std::string& sys_dev_block = "/sys/dev/block");

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_WRITE_GUARD_H_
