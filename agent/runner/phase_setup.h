// What preparing a phase makes before its timed run: the policy check, the workload and its
// untimed set-up (files laid out), the device tuning, the page-cache settling and the
// environment the phase runs in. The phase slot (phase_runner.h) holds the result.
#ifndef STORMARK_AGENT_RUNNER_PHASE_SETUP_H_
#define STORMARK_AGENT_RUNNER_PHASE_SETUP_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "agent/access/authz.h"
#include "agent/config/config.h"
#include "agent/host/environment.h"
#include "agent/host/memory_cgroup.h"
#include "agent/host/page_cache_controls.h"
#include "agent/host/sysinfo.h"
#include "agent/host/system_paths.h"
#include "agent/targets/block/block_target.h"
#include "agent/targets/written_prefix.h"
#include "agent/host/tuning.h"
#include "agent/workloads/workload.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// Everything a prepared phase holds until its cleanup.
struct PhaseSetup {
  // The phase's target as resolved when it began (block_target.h); shared with the workload.
  // Null for a dir target and a command phase.
  std::shared_ptr<BlockTarget> block;
  // TargetIdentity of `block` once the set-up is done (a block file it created included).
  std::string target_identity;
  std::unique_ptr<Workload> workload;
  std::unique_ptr<DeviceTuning> tuning;  // Restores the device's settings when destroyed.
  // The phase's memory cgroup (spec.memory_limit_bytes), which the agent is in until this is
  // destroyed; null without a limit, or when the spec let the phase run without one.
  std::unique_ptr<PhaseMemoryCgroup> memory_cgroup;
  std::vector<std::string> warnings;
  stormark::v1::CacheReport cache_report;
  Environment host_environment;
  Environment target_environment;
  // In: the file the previous phase left for this one (handed_over.h), or null. The workload
  // takes it if it reads it; what is left here is the caller's to remove.
  std::unique_ptr<HandedOver> handed;
};

// Applies spec.tuning to the target's device, if the config allows it. `block` is the target
// as the phase resolved it (null for a dir target): a block device is found in sysfs by its
// number.
common::StatusOr<std::unique_ptr<DeviceTuning>> ApplyTuning(const stormark::v1::PhaseSpec& spec,
                                                            const AgentConfig& config,
                                                            const SystemPaths& paths,
                                                            const BlockTarget* block = nullptr);

// `host` as a phase held to `limit_bytes` of memory sees it: RAM and the cgroup's limit no
// larger than the limit, so that 2 x RAM sizing and the cache notes follow it.
HostFacts MemoryLimitedFacts(const HostFacts& host, uint64_t limit_bytes);

// Builds `setup` for `spec`: what the config's identities let `caller` do and the policy
// first (a refused phase creates nothing), then the memory cgroup (the policy and the workload
// then see the host's RAM as the limit: MemoryLimitedFacts), then the resolution of a block
// target's path (once for the phase: everything after it uses what it led to), the workload (told
// what the agent's earlier phases wrote on that device, from `written`), the tuning, the workload's
// Prepare (which watches `cancelled`), the cache and the environment.
// On an error, or when `cancelled` is set, what was made so far stays in `setup` for the
// caller to remove. Blocks for as long as the set-up takes, which may be for ever when an
// I/O never returns.
common::Status SetUpPhase(const stormark::v1::PhaseSpec& spec, const Identity& caller,
                          const AgentConfig& config, const HostFacts& host,
                          const SystemPaths& paths, const PageCache& page_cache,
                          WrittenPrefixes& written, const std::atomic<bool>& cancelled,
                          PhaseSetup* setup);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RUNNER_PHASE_SETUP_H_
