// The parts of the plan file parser (ParsePlan in plan.h) that its files share: errors that
// name the plan file and line, scalars, paths relative to the plan, and the parsers of the
// hosts (plan_hosts.cc) and of one phase (plan_phases.cc). For the plan_*.cc files only.
// yaml-cpp throws on a failed conversion; ParsePlan catches it, so these may throw too.
#ifndef STORMARK_CONTROLLER_PLAN_PLAN_YAML_H_
#define STORMARK_CONTROLLER_PLAN_PLAN_YAML_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "controller/plan/plan.h"
#include "yaml-cpp/yaml.h"

namespace stormark::controller::plan_yaml {

// INVALID_ARGUMENT "plan.yaml:7: what", or "plan.yaml: what" when `mark` has no line.
common::Status ErrorAt(std::string_view source, const YAML::Mark& mark, std::string_view what);

// A scalar node's text.
std::string ScalarText(const YAML::Node& node);

// `path` as a plan names it: relative to the directory of the plan `source`.
std::string RelativeToPlan(std::string_view source, const std::string& path);

// A duration above 0 for `key`: "bad deadline '0s': must be above 0".
common::StatusOr<int64_t> ParsePositiveDuration(std::string_view key, std::string_view value);

// One entry of `hosts:` or `agents:`: "HOST:PORT", or a map with address, name, target,
// labels and tls_name.
common::StatusOr<HostPlan> ParseHost(const YAML::Node& node, std::string_view source);

// The keys that say how to reach and find the agents: tls, agents_dns, inventory.
common::Status ParseFleetAccess(const YAML::Node& root, std::string_view source, Plan* plan);

// The settings a plan gives every phase, which a phase's own keys override: `cache`,
// `memory_limit` and `memory_limit_if_unavailable` (ApplyPlanDefaults copies them).
using PhaseDefaults = stormark::v1::PhaseSpec;
void ApplyPlanDefaults(const PhaseDefaults& defaults, stormark::v1::PhaseSpec* spec);

// The `index`-th (0-based) entry of `phases:`, with the plan's default target and settings;
// several phases when its `config` asks for several runs. Each is validated (ValidatePhase).
// A fio job file is read as `first_host` (the plan's first, or null for "local") would see it.
common::StatusOr<std::vector<PhasePlan>> ParsePhase(
    const YAML::Node& node, size_t index, const std::string& target, const PhaseDefaults& defaults,
    std::string_view source, std::vector<std::string>* notes, const HostPlan* first_host = nullptr);

}  // namespace stormark::controller::plan_yaml

#endif  // STORMARK_CONTROLLER_PLAN_PLAN_YAML_H_
