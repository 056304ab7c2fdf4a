// Opening the device behind a `block:`, `aoe:` or `null:` target for one phase.
//
// A block target is a raw block device or a regular file, used in place: phases do not create
// or remove anything on it. Writing to one goes through the interlocks of
// agent/devices/write_guard.h. A block file that does not exist yet is created at its
// configured size and filled with random data (untimed, once: later phases find it there), so
// that reads never measure holes.
#ifndef STORMARK_AGENT_TARGETS_BLOCK_TARGET_H_
#define STORMARK_AGENT_TARGETS_BLOCK_TARGET_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/config.h"
#include "agent/devices/device.h"
#include "agent/devices/file_device.h"
#include "common/status.h"

namespace stormark::agent {

struct BlockOpenOptions {
  // The phase writes (its workload, or its layout of verifiable data).
  bool write = false;
  bool direct = false;
  Engine engine = Engine::kPsync;
};

// Opens the device of `target` (kind "block", "null", "aoe", "nbd" or "iscsi"; the network
// kinds ignore direct and engine). An AoE target is discovered here, which takes up to
// AoeOptions::discovery_timeout_nanos when it does not answer. Fails, naming the target, when
// writing is refused or the device cannot be opened as asked. Remarks for the result (such as
// "created and filled ...") go to `warnings`. Returns CANCELLED soon after `cancelled` is set,
// which must outlive the device.
common::StatusOr<std::unique_ptr<Device>> OpenBlockTarget(const TargetConfig& target,
                                                          const BlockOpenOptions& options,
                                                          const std::atomic<bool>& cancelled,
                                                          std::vector<std::string>* warnings);

// How much of a range of a block target holds no data, and where that was asked (the file,
// or "/dev/loop3 (on /srv/disk.img)").
struct Unallocated {
  uint64_t bytes = 0;
  std::string where;
};

// For a block target that is a regular file, or a loop device over one: the bytes of
// [begin, end) that hold no data (holes, preallocated extents), which read as zeros from the
// filesystem without touching the disk. nullopt for anything that cannot tell (raw disks,
// network targets, a backing file this agent may not read, a filesystem that calls a file
// with fewer bytes allocated than it claims hold data all data: no SEEK_HOLE, compression). `sys_dev_block` is where loop
// devices are looked up (SystemPaths).
std::optional<Unallocated> FindUnallocated(const TargetConfig& target, uint64_t begin,
                                           uint64_t end, const std::string& sys_dev_block);

// Warns when a phase's reads of [begin, end) of a block target would not touch the disk: for a
// regular file, or a loop device over one, the parts of the range that hold no data (holes,
// preallocated extents) read as zeros from the filesystem. The warning names how much. It
// never writes: filling a sparse image could fill its filesystem, and a read-only phase is
// not where a device gets written. Returns whether the target could be asked (false for raw
// disks, network targets and anything else that cannot tell; then nothing is said).
// `sys_dev_block` is where loop devices are looked up (SystemPaths).
bool WarnUnallocated(const TargetConfig& target, uint64_t begin, uint64_t end,
                     const std::string& sys_dev_block, std::vector<std::string>* warnings);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_BLOCK_TARGET_H_
