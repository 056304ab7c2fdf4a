// Where a file-backed device holds no data. A read of a hole in a sparse file, or of an extent
// that was allocated but never written (fallocate), is answered by the filesystem with zeros
// without touching the disk: a random read over such space measures nothing but the kernel.
// Regular files answer lseek(SEEK_DATA/SEEK_HOLE) exactly; a loop device is asked through
// its backing file. Other block devices (disks, thin volumes, network LUNs) cannot tell.
#ifndef STORMARK_AGENT_DEVICES_UNALLOCATED_H_
#define STORMARK_AGENT_DEVICES_UNALLOCATED_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/devices/device.h"
#include "common/status.h"

namespace stormark::agent {

// The parts of [begin, end) of the regular file open as `fd` that hold no data, in order.
// A filesystem without SEEK_HOLE support reports everything as data (the kernel's default),
// so the answer is then empty.
common::StatusOr<std::vector<ByteRange>> UnallocatedRanges(int fd, uint64_t begin, uint64_t end);

// The file behind a loop device and where in it the device starts.
struct LoopBacking {
  std::string file;
  uint64_t offset = 0;
};

// What the block device numbered `rdev` (st_rdev of /dev/loop3, or of a symlink to it) is
// backed by, read from `sys_dev_block`/MAJ:MIN/loop/{backing_file,offset}; nullopt when it is
// not a loop device, has no backing file, or the attributes cannot be read.
std::optional<LoopBacking> LoopBackingOf(dev_t rdev, const std::string& sys_dev_block);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_UNALLOCATED_H_
