// What preparing a phase makes before its timed run: the policy check, the workload and its
// untimed set-up (files laid out), the device tuning, the page-cache settling and the
// environment the phase runs in. The phase slot (phase_runner.h) holds the result.
#ifndef STORMARK_AGENT_PHASE_SETUP_H_
#define STORMARK_AGENT_PHASE_SETUP_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "agent/authz.h"
#include "agent/config.h"
#include "agent/environment.h"
#include "agent/page_cache.h"
#include "agent/sysinfo.h"
#include "agent/system_paths.h"
#include "agent/targets/written_prefix.h"
#include "agent/tuning.h"
#include "agent/workloads/workload.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// Everything a prepared phase holds until its cleanup.
struct PhaseSetup {
  std::unique_ptr<Workload> workload;
  std::unique_ptr<DeviceTuning> tuning;  // Restores the device's settings when destroyed.
  std::vector<std::string> warnings;
  stormark::v1::CacheReport cache_report;
  Environment host_environment;
  Environment target_environment;
};

// Applies spec.tuning to the target's device, if the config allows it.
common::StatusOr<std::unique_ptr<DeviceTuning>> ApplyTuning(const stormark::v1::PhaseSpec& spec,
                                                            const AgentConfig& config,
                                                            const SystemPaths& paths);

// Builds `setup` for `spec`: what the config's identities let `caller` do and the policy
// first (a refused phase creates nothing), then the workload (told what the agent's earlier
// phases wrote on the target: `earlier`), the tuning, the workload's Prepare (which watches
// `cancelled`), the cache and the environment.
// On an error, or when `cancelled` is set, what was made so far stays in `setup` for the
// caller to remove. Blocks for as long as the set-up takes, which may be for ever when an
// I/O never returns.
common::Status SetUpPhase(const stormark::v1::PhaseSpec& spec, const Identity& caller,
                          const AgentConfig& config, const HostFacts& host,
                          const SystemPaths& paths, const PageCache& page_cache,
                          const WrittenPrefix& earlier, const std::atomic<bool>& cancelled,
                          PhaseSetup* setup);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_PHASE_SETUP_H_
