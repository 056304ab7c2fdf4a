// Every workload this agent was built with (agent/workloads/<name>/, workload_module.h).
#ifndef STORMARK_AGENT_WORKLOADS_WORKLOAD_REGISTRY_H_
#define STORMARK_AGENT_WORKLOADS_WORKLOAD_REGISTRY_H_

#include <string>
#include <string_view>
#include <vector>

#include "agent/workloads/workload_module.h"

namespace stormark::agent {

// The modules, in the order of their names.
const std::vector<const WorkloadModule*>& WorkloadModules();

// The module of the workload `spec` holds, or nullptr when it holds none this agent knows.
const WorkloadModule* FindWorkload(const stormark::v1::PhaseSpec& spec);

// The module named `name`, or nullptr.
const WorkloadModule* FindWorkload(std::string_view name);

// The program `spec`'s phase runs (WorkloadModule::program), or nullptr when it runs none.
const stormark::v1::CommandSpec* ProgramOf(const stormark::v1::PhaseSpec& spec);

// Whether `spec`'s phase changes data on `target` (WorkloadModule::writes); true for a
// workload this agent does not know.
bool WorkloadWrites(const stormark::v1::PhaseSpec& spec, const TargetConfig& target);

// What makes `spec`'s phase last long enough to time (WorkloadModule::too_fast_hint).
std::string TooFastHint(const stormark::v1::PhaseSpec& spec);

// Their names, for AgentInfo.workloads and messages.
std::vector<std::string> KnownWorkloads();

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_WORKLOAD_REGISTRY_H_
