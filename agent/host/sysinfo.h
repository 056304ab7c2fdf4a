// Facts about this host and its targets: what the reports print next to the numbers.
#ifndef STORMARK_AGENT_HOST_SYSINFO_H_
#define STORMARK_AGENT_HOST_SYSINFO_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "agent/config/config.h"
#include "agent/host/system_paths.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

struct HostFacts {
  std::string hostname;
  std::string kernel;     // "Linux 6.1.0-18-amd64"
  std::string cpu_model;  // from /proc/cpuinfo
  uint32_t cpu_count = 0;
  uint64_t ram_bytes = 0;
  // The most memory the agent's memory cgroup (or one above it) lets it and its children use:
  // systemd's MemoryMax, a container's memory limit. 0 when there is no limit.
  uint64_t memory_limit_bytes = 0;
};

// Reads the host's facts from uname, /proc/cpuinfo, sysconf and the agent's memory cgroup.
// Never fails: a fact that cannot be read is left empty or 0.
HostFacts ReadHostFacts();

// The smallest memory limit on the cgroup path of this process and its ancestors, as
// `proc_self_cgroup` (/proc/self/cgroup) names the path and `sys_fs_cgroup` (/sys/fs/cgroup)
// holds the files: memory.max under cgroup v2, memory/.../memory.limit_in_bytes under v1.
// 0 when no limit is set or none can be read.
uint64_t ReadCgroupMemoryLimit(const std::string& proc_self_cgroup,
                               const std::string& sys_fs_cgroup);

// The facts of one configured target now: filesystem, mount options, device, free space,
// the device's queue settings and transport, and the environment map of them
// (environment.h). Unreadable facts are left empty. `fd`, when not -1, is what a phase
// resolved a block target's path to (BlockTarget::fd()): the facts are then of what it
// refers to, wherever the path leads now.
stormark::v1::TargetInfo ReadTargetFacts(const TargetConfig& target,
                                         const SystemPaths& paths = SystemPaths(), int fd = -1);

// For a target kind's facts (agent/targets/target_kind.h): the filesystem holding `configured`
// (a path of this host, or one not made yet whose directory exists), or holding what `resolved`
// refers to when it is not -1: filesystem type, mount options, the device under it and that
// device's queue settings and transport (unless info's transport is set), free and total bytes.
void ReadFilesystemFacts(const std::string& configured, const SystemPaths& paths, int resolved,
                         stormark::v1::TargetInfo* info);

// Fills info's device_queue from /sys/dev/block/MAJ:MIN of the block device `dev` (a
// partition's queue is its disk's), and the device's transport unless info's is set. Nothing
// for dev 0.
void ReadDeviceQueue(dev_t dev, const SystemPaths& paths, stormark::v1::TargetInfo* info);

// Whether the ext4 filesystem on `device` ("/dev/vda1", as ReadFilesystemFacts names it) has no
// journal: no entry of it under paths.proc_fs_jbd2. False when `device` is empty.
bool Ext4WithoutJournal(const std::string& device, const SystemPaths& paths);

// A field of /proc/self/mountinfo or /proc/swaps with its octal escapes (\040 for a space)
// undone.
std::string UnescapeMountField(std::string_view field);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_HOST_SYSINFO_H_
