// The environment a result is measured in, as key/value facts under stable keys, so that
// reports can print them beside the figures and point out the ones that differ between rows.
//
// Host keys (AgentInfo.environment, PhaseResult.host_environment):
//   kernel, cpu_model, cpu_count, ram_bytes,
//   cpu_governor       cpufreq's scaling_governor ("performance"; "none" without cpufreq;
//                      distinct values joined by "," when the CPUs differ),
//   vm.dirty_ratio, vm.dirty_background_ratio, vm.dirty_bytes, vm.dirty_background_bytes,
//   vm.dirty_expire_centisecs, vm.dirty_writeback_centisecs   (/proc/sys/vm),
//   memory_limit_bytes, memory_cgroup   (a phase's memory cgroup, PhaseResult only: the limit
//                      as the kernel holds it, and "v1 /sys/fs/cgroup/memory/...").
// Target keys (TargetInfo.environment, PhaseResult.target_environment), where they apply:
//   filesystem, mount_options, device (the disk's name: "sda"),
//   scheduler, read_ahead_kb, nr_requests, rotational, write_cache, max_sectors_kb,
//   queue_depth (SCSI disks), model, vendor, backing_file (a loop device's file),
//   transport, transport_detail   (see transport.h).
// A fact that cannot be read is left out, never guessed.
#ifndef STORMARK_AGENT_HOST_ENVIRONMENT_H_
#define STORMARK_AGENT_HOST_ENVIRONMENT_H_

#include <map>
#include <string>

#include "agent/host/sysinfo.h"
#include "agent/host/system_paths.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

using Environment = std::map<std::string, std::string>;

// The host's facts now: `host` for what does not change, the rest read from sysfs and
// procfs. Never fails.
Environment ReadHostEnvironment(const HostFacts& host, const SystemPaths& paths);

// The target keys above, from facts ReadTargetFacts gathered. Pure.
Environment TargetEnvironment(const stormark::v1::TargetInfo& info);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_HOST_ENVIRONMENT_H_
