// What an agent's config allows beyond its targets: mutual TLS, where scratch files may go,
// and resource caps on every phase. Kept apart from config.cc (which parses targets) so the
// two grow independently.
//
//   tls:                        # mutual TLS: controllers must hold a certificate this CA
//     ca: /etc/stormark/ca.crt  # signed (stormark certs init / issue)
//     cert: /etc/stormark/agent.crt
//     key: /etc/stormark/agent.key
//   scratch: [/srv/bench]       # every dir target must lie under one of these (after
//                               # symlinks), checked at start and again before each phase
// The files named here (and the config file itself) must be owned by root or the agent's
// user and not writable by group or others, nor any directory above them (strict_modes.h).
//   limits:
//     max_size: 10G             # the most data one phase may lay out in a dir target
//     max_runtime: 10m          # the longest a phase may ask to run; a phase running longer
//                               # is aborted
//     max_files: 100000         # the most files one phase may create (bonnie, postmark)
//     max_memory: 4G            # the most memory one phase may hold (buffers, tables; see
//                               # common/memory_estimate.h); default a quarter of the RAM
#ifndef STORMARK_AGENT_CONFIG_POLICY_H_
#define STORMARK_AGENT_CONFIG_POLICY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/memory_estimate.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace YAML {
class Node;
}

namespace stormark::agent {

struct AgentConfig;
struct HostFacts;
struct TargetConfig;

// The agent's mutual-TLS files (the config's `tls:`, or --tls-*); all empty: plain text.
struct TlsConfig {
  std::string ca;
  std::string cert;
  std::string key;

  bool empty() const { return ca.empty() && cert.empty() && key.empty(); }
};

struct ResourceLimits {
  // 0 means no cap.
  uint64_t max_size_bytes = 0;
  int64_t max_runtime_nanos = 0;
  uint64_t max_files = 0;
  // 0 means the default (see PhaseMemoryBudget).
  uint64_t max_memory_bytes = 0;
};

// The most memory one phase may hold: limits.max_memory; when the config gives none, a
// quarter of the host's RAM, or half of what the agent's memory cgroup allows when that is
// less (the rest is the agent's own, and its page cache's). 0, no cap, when nothing is known.
struct MemoryBudget {
  uint64_t bytes = 0;
  // Where a default came from, for messages: "a quarter of its RAM"; "" when configured.
  std::string note;
};
MemoryBudget PhaseMemoryBudget(const ResourceLimits& limits, const HostFacts& host);

// The policy keys of an agent config: "tls", "scratch", "limits", "identities"
// (agent/access/authz.h).
bool IsPolicyKey(std::string_view key);
inline constexpr char kPolicyKeyNames[] = "tls, scratch, limits, identities";

// Parses one policy key's value into `config`. Errors name `source` and the line.
common::Status ParsePolicyKey(std::string_view key, const YAML::Node& value,
                              std::string_view source, AgentConfig* config);

// OK when the dir target lies under one of the config's scratch directories (or none are
// configured), after resolving symbolic links; PERMISSION_DENIED naming both otherwise.
common::Status CheckScratch(const AgentConfig& config, const TargetConfig& target);

// OK when a dir target's directory, or a block target that is a regular file (or the
// directory it will be made in), passes agent/config/strict_modes.h for config.agent_uid, or is not
// checked (a device, a network or null target, `strict_modes: false`); otherwise the refusal,
// prefixed "target 'NAME': ". Called before each phase: an owner or mode may change after
// start.
common::Status CheckTargetOwnership(const AgentConfig& config, const TargetConfig& target);

// OK when the program a command phase (or hook) would run passes agent/config/strict_modes.h, and
// for every other phase. A program that cannot be found, or that the command policy does not allow,
// is left for the workload to report.
common::Status CheckCommandProgram(const stormark::v1::PhaseSpec& spec, const AgentConfig& config);

// The start-up check of what the agent reads and runs: the config file at `config_path`, the
// TLS files (agent and nbd), CHAP password files and the commands.allow programs must pass
// agent/config/strict_modes.h, else an error naming the setting. A dir or block target that fails,
// or is not checked, is a line in `warnings` instead: its owner may be fixed while the agent runs,
// and each phase checks again.
common::Status CheckTrustedFiles(const AgentConfig& config, const std::string& config_path,
                                 std::vector<std::string>* warnings);

// The bytes a phase will lay out in a dir target, at most: a stream's file, bonnie's data file
// and its small files, PostMark's pool and every file its transactions could create, randio's
// file. 0 when the phase makes no files of known size (command, block and null targets).
common::StatusOr<uint64_t> PhaseDataBytes(const stormark::v1::PhaseSpec& spec,
                                          const TargetConfig& target, const HostFacts& host);

// The files a phase may create at most: bonnie's files_k x 1024, PostMark's pool plus one
// per transaction; 0 for the single-file workloads.
uint64_t PhaseFileCount(const stormark::v1::PhaseSpec& spec);

// The memory one file holds, while it exists, that a memory cgroup counts and the kernel cannot
// reclaim before the file is written back. On ext4 (Linux 6.18, /proc/slabinfo): its inode of
// 1,128 bytes in its slab (14 to 16 KiB: 1,170 bytes each), its directory entry of 192 (21 to
// 4 KiB: 195), the 256 bytes of its inode on disk in the block device's cache, and its name in
// a directory block (about 32 bytes): 1,653, rounded up. Measured: 48 x 1024 files filled a
// 64 MiB limit (53 MiB of it kernel memory), 36 x 1024 did not.
inline constexpr uint64_t kKernelBytesPerFile = 1700;

// OK unless the phase holds more files at once than a memory limit has room for (`host`'s
// memory_limit_bytes: the phase's, or the agent's own cgroup's): their inodes and directory
// entries (kKernelBytesPerFile each) would take over three quarters of it, and the phase would
// run out of memory midway (memory_cgroup.h, "When the limit is full"; at 36 x 1024 files in
// 64 MiB, 90% by this estimate, a stat failed with ENOMEM under load). INVALID_ARGUMENT with
// one line naming the files, their memory and the limit otherwise.
common::Status CheckKernelMemory(const stormark::v1::PhaseSpec& spec, const HostFacts& host);

// The runtime a phase asks for (randio's runtime plus ramp, a command's timeout); 0 when it
// does not say, and then the agent's watchdog stops it at max_runtime.
int64_t PhaseRequestedRuntimeNanos(const stormark::v1::PhaseSpec& spec);

// The memory a phase will hold at most (common/memory_estimate.h). A randio spec without a
// size takes its region from the target: the dir target's default file, a configured size
// (block, null, network targets); otherwise the device's size is not known before it is
// opened, and a verify book is counted at its largest.
common::MemoryEstimate PhaseMemory(const stormark::v1::PhaseSpec& spec, const TargetConfig& target);

// OK when `estimate` fits `budget` (or there is none); PERMISSION_DENIED with one line naming
// the parameters that make the phase that large otherwise.
common::Status CheckMemory(const common::MemoryEstimate& estimate, const MemoryBudget& budget);

// OK when the phase is within every cap (memory included), its target within the scratch
// directories and owned as CheckTargetOwnership says, and its program (a command's) as
// CheckCommandProgram says;
// PERMISSION_DENIED with one line naming the cap, the figure and the config key otherwise.
common::Status CheckPolicy(const stormark::v1::PhaseSpec& spec, const AgentConfig& config,
                           const HostFacts& host);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_CONFIG_POLICY_H_
