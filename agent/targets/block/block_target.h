// A `block:` target as one phase uses it, and opening its device (block_kind.h registers the
// kind).
//
// A block target is a raw block device or a regular file, used in place: phases do not create
// or remove anything on it. Its path (often a /dev/disk/by-id/ symlink, which may lead to
// another disk after a hot-swap) is resolved once per phase (BlockTarget::Resolve): opened and
// recorded by its identity. Everything the phase then does with the target goes through that
// descriptor, or through one opened by the path again whose identity is compared with it
// (BlockTarget::Reopen): the interlocks, the layout, the workload's device, the probes for
// holes, the page-cache eviction, the facts and the tuning. A path that leads elsewhere in the
// middle of a phase fails it, in one line naming both identities. A later phase resolves the
// path afresh.
//
// Writing goes through the interlocks of agent/devices/write_guard.h, run on the descriptor
// that is written through. A block file that does not exist yet is created at its configured
// size and filled with random data (untimed, once: later phases find it there), so that reads
// never measure holes.
#ifndef STORMARK_AGENT_TARGETS_BLOCK_BLOCK_TARGET_H_
#define STORMARK_AGENT_TARGETS_BLOCK_BLOCK_TARGET_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/devices/device.h"
#include "agent/devices/file_device.h"
#include "agent/targets/target_kind.h"
#include "common/status.h"

namespace stormark::agent {

// What a block target's path leads to, told apart from anything put in its place: a block
// device by its number (st_rdev: another node of the same device is the same device), a
// regular file by its filesystem's device and its inode number.
struct DeviceIdentity {
  bool block = false;
  dev_t rdev = 0;  // A block device.
  dev_t dev = 0;   // A regular file.
  ino_t ino = 0;

  static DeviceIdentity Of(const struct stat& st);
  bool operator==(const DeviceIdentity& other) const = default;
  // "block device 7:3", "file 8:1 inode 1234".
  std::string ToString() const;
};

// A target as one phase uses it: for a `block:` target, what its path led to when the phase
// resolved it. The other kinds hold their config alone (has_path() and exists() are false);
// their modules open their devices from it (TargetKind::open_device).
//
// Not thread-safe: a phase's set-up makes it and may create its file; afterwards it is only
// read.
class BlockTarget {
 public:
  // Resolves `target` for a phase. A block target's path is opened read-only and must be a
  // block device or a regular file; a block file that does not exist yet but has a size
  // configured resolves to nothing (exists() false) until OpenBlockTarget creates it. Fails, naming
  // the target and the path, otherwise.
  static common::StatusOr<std::shared_ptr<BlockTarget>> Resolve(const TargetConfig& target);
  ~BlockTarget();

  BlockTarget(const BlockTarget&) = delete;
  BlockTarget& operator=(const BlockTarget&) = delete;

  const TargetConfig& config() const { return config_; }
  // Whether the target is reached by a path of this host that Resolve followed (a block
  // target); false for the kinds reached otherwise.
  bool has_path() const { return has_path_; }
  // Whether the path led to something (false for the other kinds, and for a block file not
  // created yet).
  bool exists() const { return exists_; }
  // What the path led to (meaningless unless exists()).
  const DeviceIdentity& identity() const { return identity_; }
  // The read-only descriptor of what the path led to, owned by this; -1 unless exists(), and
  // after ReleaseDescriptor.
  int fd() const { return fd_; }
  // Closes fd() once the phase's set-up no longer needs it; identity() stays, and Reopen
  // still compares with it. A run holds only its workload's own device open: the kernel
  // writes a block device's dirty pages back at its last close, which a run times (as dd's).
  void ReleaseDescriptor();

  // Opens the path again with `flags` (O_CLOEXEC is added), for a descriptor with other flags
  // than fd()'s (O_RDWR, O_DIRECT, O_EXCL), and checks that it is what the phase resolved
  // (it must exist()):
  // FAILED_PRECONDITION naming the target, the path and both identities when it is not (the
  // descriptor is then closed again, unused). Errors of open(2) name the path. The caller
  // owns the descriptor returned.
  common::StatusOr<int> Reopen(int flags) const;

  // Creates the block file that did not exist (O_CREAT | O_EXCL | O_NOFOLLOW: nothing put in
  // its place is followed or reused), which becomes what the target resolves to. Returns a
  // read-write descriptor to it that the caller owns. FAILED_PRECONDITION when the target
  // exists() already.
  common::StatusOr<int> CreateFile();
  // Removes the file CreateFile made (its fill failed) if the path still names that file,
  // and forgets it: the target resolves to nothing again.
  void RemoveCreatedFile();

 private:
  explicit BlockTarget(TargetConfig config) : config_(std::move(config)) {}

  const TargetConfig config_;
  bool has_path_ = false;
  bool exists_ = false;
  DeviceIdentity identity_;
  int fd_ = -1;
  bool created_ = false;  // By CreateFile.
};

// Opens the device of a block target (the block kind's TargetKind::open_device; phases call
// OpenTargetDevice, which serves every kind). Its device is what it resolved to (see
// BlockTarget::Reopen); a block file not created yet is created and filled first. For
// writing, the interlocks run on the descriptor resolved, and again on the one written
// through once it is held exclusively. Fails, naming the target, when writing is refused or
// the device cannot be opened as asked, and for a target of another kind. Remarks for the
// result (such as "created and filled ...") go to `warnings`. Returns CANCELLED soon after
// `cancelled` is set.
common::StatusOr<std::unique_ptr<Device>> OpenBlockTarget(BlockTarget& target,
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
// filesystem without touching the disk. Asked of what the target resolved to (a loop
// device's backing file is checked to be the one the device reads). nullopt for anything that
// cannot tell (raw disks, network targets, a backing file this agent may not read, a
// filesystem that calls a file with fewer bytes allocated than it claims hold data all data:
// no SEEK_HOLE, compression). `sys_dev_block` is where loop devices are looked up
// (SystemPaths).
std::optional<Unallocated> FindUnallocated(const BlockTarget& target, uint64_t begin, uint64_t end,
                                           const std::string& sys_dev_block);

// Warns when a phase's reads of [begin, end) of a block target would not touch the disk: for a
// regular file, or a loop device over one, the parts of the range that hold no data (holes,
// preallocated extents) read as zeros from the filesystem. The warning names how much. It
// never writes: filling a sparse image could fill its filesystem, and a read-only phase is
// not where a device gets written. Returns whether the target could be asked (false for raw
// disks, network targets and anything else that cannot tell; then nothing is said).
// `sys_dev_block` is where loop devices are looked up (SystemPaths).
bool WarnUnallocated(const BlockTarget& target, uint64_t begin, uint64_t end,
                     const std::string& sys_dev_block, std::vector<std::string>* warnings);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_BLOCK_BLOCK_TARGET_H_
