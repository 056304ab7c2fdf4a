// Builds the workload a PhaseSpec asks for, on a target from the agent's configuration, through
// the workload's module (workload_registry.h).
#ifndef STORMARK_AGENT_WORKLOADS_FACTORY_H_
#define STORMARK_AGENT_WORKLOADS_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/host/sysinfo.h"
#include "agent/targets/block/block_target.h"
#include "agent/targets/written_prefix.h"
#include "agent/workloads/workload.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// NOT_FOUND for a target the configuration does not name; INVALID_ARGUMENT for a bad spec.
// Creates the phase's directory on the target. `earlier` is what the agent's earlier phases
// wrote on the target (a stream read need not lay that out again). `block` is the target as
// the phase resolved it (block_target.h), shared with the workload; when null, a block
// workload resolves it in its Prepare. `handed`, when not null, holds the file the previous
// phase left for this one (handed_over.h): a workload that reads it moves it out.
common::StatusOr<std::unique_ptr<Workload>> MakeWorkload(
    const stormark::v1::PhaseSpec& spec, const AgentConfig& config, const HostFacts& host,
    const WrittenPrefix& earlier = {}, std::shared_ptr<BlockTarget> block = nullptr,
    std::unique_ptr<HandedOver>* handed = nullptr);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_FACTORY_H_
