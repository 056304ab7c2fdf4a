// What a target offers the workloads and the policy. They ask for a capability here instead of
// testing the target's kind name, as fio's engines declare their flags: each kind says once what
// it can do (agent/targets/<kind>), and a new kind needs no change outside its own module.
#ifndef STORMARK_AGENT_TARGETS_TARGET_CAPS_H_
#define STORMARK_AGENT_TARGETS_TARGET_CAPS_H_

#include "agent/config/config.h"

namespace stormark::agent {

struct TargetCaps {
  // A directory on a mounted filesystem: a phase makes its files below it, in a directory of its
  // own (the file workloads; stream and randio on a file they lay out).
  bool files = false;
  // A device addressed by offset, which the block workloads (stream, randio) use in place.
  bool device = false;
  // A path on this host whose filesystem facts can be read (a dir target; a block target, on a
  // device node or on a regular file).
  bool local_path = false;
  // Buffered I/O on it goes through this host's page cache, so a read may be served from memory
  // unless it is direct.
  bool page_cache = false;
  // Reached over a network by the agent's own initiator (AoE, NBD, iSCSI).
  bool remote = false;
  // Writes are dropped and reads return zeros: nothing to lay out, verify or clean up.
  bool discards = false;
  // Requests go through the engine a workload chooses (psync, io_uring; agent/devices/
  // file_device.h) on a descriptor of this host. The other kinds have an initiator of their
  // own, which results name by the kind's name.
  bool engines = false;

  bool operator==(const TargetCaps&) const = default;
};

// The capabilities of `target`'s kind, as its module declares them (target_kind.h); none for a
// kind this agent does not know.
TargetCaps CapsOf(const TargetConfig& target);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_TARGET_CAPS_H_
