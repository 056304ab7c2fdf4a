// One workload as the agent knows it. Each workload is a module, agent/workloads/<name>/, whose
// <name>_module.cc defines `<name>_workload::Module()`; the build lists every such folder
// (agent/CMakeLists.txt), so adding a workload changes no file outside its own module. The
// factory, the policy and the deadlines ask the module; none of them names a workload.
#ifndef STORMARK_AGENT_WORKLOADS_WORKLOAD_MODULE_H_
#define STORMARK_AGENT_WORKLOADS_WORKLOAD_MODULE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "agent/config/config.h"
#include "agent/host/sysinfo.h"
#include "agent/targets/block/block_target.h"
#include "agent/targets/target_caps.h"
#include "agent/targets/written_prefix.h"
#include "agent/workloads/workload.h"
#include "common/memory_estimate.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// What a workload is built from, for one phase.
struct WorkloadInputs {
  const stormark::v1::PhaseSpec& spec;
  const AgentConfig& config;
  const TargetConfig& target;
  TargetCaps caps;
  const HostFacts& host;
  // What the agent's earlier phases wrote on the target (a read need not lay that out again).
  const WrittenPrefix& earlier;
  // The target as the phase resolved it (block_target.h), or null: a block workload then
  // resolves it in its Prepare.
  std::shared_ptr<BlockTarget> block;
  // The data file the previous phase left for this one on a dir target (handed_over.h), or
  // null: a workload that reads it moves it out; the runner removes what is left.
  std::unique_ptr<HandedOver>* handed = nullptr;
};

struct WorkloadModule {
  // The name in plans and in AgentInfo.workloads: the PhaseSpec oneof field that carries it.
  std::string_view name;
  stormark::v1::PhaseSpec::WorkloadCase spec_case;

  // The first problem with the spec alone, as one line naming the parameter, or OK (its
  // common/workloads/<name>/ rules, which the controller applies too).
  common::Status (*check)(const stormark::v1::PhaseSpec& spec);
  // Whether it runs on a target with these capabilities: one line saying why not, or OK;
  // nullptr when it runs on every target.
  common::Status (*check_target)(const stormark::v1::PhaseSpec& spec, const TargetConfig& target,
                                 const TargetCaps& caps) = nullptr;
  // The program the phase runs, when the workload runs one that the config's `commands:`
  // governs (the command workload, and the plan hooks it carries), or nullptr. The access
  // rules (`commands:`, `hooks:`) and the policy's program checks judge it. Such a phase gets
  // the target's path as configured and resolves nothing itself, and since the program may
  // change any device, the agent forgets what it had written anywhere. A workload that runs
  // no program leaves this nullptr.
  const stormark::v1::CommandSpec* (*program)(const stormark::v1::PhaseSpec& spec) = nullptr;
  // Whether the phase changes data on `target`, for an identity whose rule says
  // `write: false`; nullptr when it always may.
  bool (*writes)(const stormark::v1::PhaseSpec& spec, const TargetConfig& target) = nullptr;
  // Builds the workload; called after check and check_target passed. Makes the phase's
  // directory on a target with files.
  common::StatusOr<std::unique_ptr<Workload>> (*make)(const WorkloadInputs& in);

  // What it asks of the host, for the policy's limits, stated from a spec that passed check.
  // Bytes it may lay out below a target with files (the filesystem's space); nullptr for 0.
  common::StatusOr<uint64_t> (*data_bytes)(const stormark::v1::PhaseSpec& spec,
                                           const HostFacts& host) = nullptr;
  // Files it may create; nullptr for none.
  uint64_t (*files)(const stormark::v1::PhaseSpec& spec) = nullptr;
  // Files it holds at once at most, whose inodes and directory entries are kernel memory that
  // a memory limit must hold too (policy.h, kKernelBytesPerFile); nullptr for none.
  uint64_t (*live_files)(const stormark::v1::PhaseSpec& spec) = nullptr;
  // The memory it will hold at most (common/memory_estimate.h).
  common::MemoryEstimate (*memory)(const stormark::v1::PhaseSpec& spec, const TargetConfig& target,
                                   const TargetCaps& caps) = nullptr;
  // The runtime it asks for (ramp included), 0 when it ends with its work; nullptr for 0.
  int64_t (*runtime_nanos)(const stormark::v1::PhaseSpec& spec) = nullptr;
  // What makes a phase that ended too fast to time last longer, for its warning ("use a
  // longer runtime" for a time-based randio); nullptr for "use a larger size".
  std::string_view (*too_fast_hint)(const stormark::v1::PhaseSpec& spec) = nullptr;
};

// The filesystem holding a target with a local path (for the tmpfs and cache remarks): its
// directory's, or the filesystem of a block target's file; "" for the other kinds.
std::string TargetFilesystem(const WorkloadInputs& in);

// OK on a target with files; otherwise one line: "<workload> runs on a dir target; ...".
common::Status NeedsFiles(std::string_view workload, const TargetConfig& target,
                          const TargetCaps& caps);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_WORKLOAD_MODULE_H_
