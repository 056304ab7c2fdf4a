// What the agent's own phases wrote on its disposable block and network targets, kept for the
// agent's lifetime (in memory: a restarted agent knows nothing). Per target, the longest
// prefix [0, N) of its device that they wrote in full, so that a stream read of [0, size)
// with size <= N reads their data instead of laying it out again.
//
// Only what is certain is kept:
//   - a phase adds what it wrote from offset 0 in requests that completed (a stream write
//     aborted halfway adds the half it wrote; on a network target, whose server's cache
//     need not be shared with the next connection, only a write flushed by its fdatasync
//     counts); a phase that failed adds nothing;
//   - a command phase forgets every target: a command or hook may discard, recreate or
//     reformat anything (blkdiscard, lvcreate, losetup);
//   - a target whose device is no longer the same one (a block file replaced by another
//     inode, a loop device attached to another backing file, another device number) is
//     forgotten when next looked at. The identity compared is the one a phase resolved
//     (TargetIdentity of its BlockTarget), never a path looked at again; the reader also
//     compares the device's size with the one recorded (the only identity a network target
//     has).
// A discard made by hand outside the agent on the same device is not seen; the stream read
// that relies on an earlier phase says so in its result, naming that phase.
//
// Thread-safe.
#ifndef STORMARK_AGENT_TARGETS_WRITTEN_PREFIX_H_
#define STORMARK_AGENT_TARGETS_WRITTEN_PREFIX_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/config/config.h"
#include "agent/host/system_paths.h"
#include "agent/targets/block/block_target.h"

namespace stormark::agent {

// [0, bytes) of a target's device, of device_size bytes, holds data the agent's phases wrote;
// `phase_id` is the last phase that extended it, and `how` says what it did ("stream write").
// bytes == 0: nothing is known.
struct WrittenPrefix {
  uint64_t bytes = 0;
  uint64_t device_size = 0;
  std::string phase_id;
  std::string how;
  // The phase discarded data on the device (trim): what was known of it is forgotten, so a
  // later read lays its data out again instead of reading holes.
  bool discarded = false;
};

class WrittenPrefixes {
 public:
  WrittenPrefixes() = default;

  // What is known of `target`, whose device is now `identity` (TargetIdentity): nothing for a
  // target that is not a disposable block, aoe, nbd or iscsi target, or whose device was
  // another one when it was recorded (which also forgets it).
  WrittenPrefix Find(const TargetConfig& target, const std::string& identity);

  // A phase wrote [0, written.bytes) of `target`'s device, `identity`, in full. Extends what
  // is known (a shorter write leaves a longer prefix in place; a device of another size or
  // identity starts anew); ignored when written.bytes is 0 or for a target Find would not
  // answer for.
  void Record(const TargetConfig& target, const std::string& identity,
              const WrittenPrefix& written);

  // Forgets every target (a command phase may have changed any of them).
  void ForgetAll();

 private:
  struct Entry {
    WrittenPrefix prefix;
    std::string identity;
  };

  absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);  // By target name.
};

// What tells the device `target` resolved to apart from one put in its place: for a block
// target, the file's device and inode number, or the block device's number and, for a loop
// device, its backing file's path and inode number (loop devices are looked up in
// paths.sys_dev_block); "" for the kinds that have none (network targets are told apart by
// their size alone). "missing" for a block file that does not exist.
std::string TargetIdentity(const BlockTarget& target, const SystemPaths& paths);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_WRITTEN_PREFIX_H_
