// ParsePlan and LoadPlan (plan.h): the plan file's top-level keys, its sweep and hooks, and
// the checks that need the whole plan. Hosts and phases: plan_hosts.cc and plan_phases.cc.
#include "controller/plan/plan.h"

#include <algorithm>
#include <cstdlib>

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/text_file.h"
#include "controller/fio/job_file.h"
#include "controller/plan/plan_yaml.h"
#include "controller/workloads/workload_kinds.h"
#include "yaml-cpp/yaml.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;
using plan_yaml::ErrorAt;
using plan_yaml::ParseFleetAccess;
using plan_yaml::ParseHost;
using plan_yaml::ParsePhase;
using plan_yaml::ParsePositiveDuration;
using plan_yaml::PhaseDefaults;
using plan_yaml::ScalarText;

// `heartbeat: {interval: 2s, timeout: 10s}`.
Status ParseHeartbeat(const YAML::Node& node, std::string_view source, Plan* plan) {
  if (!node.IsMap()) {
    return ErrorAt(source, node.Mark(),
                   "'heartbeat' must be a map such as {interval: 2s, timeout: 10s}");
  }
  for (const auto& field : node) {
    const std::string key = ScalarText(field.first);
    if (key != "interval" && key != "timeout") {
      return ErrorAt(source, field.first.Mark(),
                     StrCat("unknown field 'heartbeat.", key, "' (known: interval, timeout)"));
    }
    auto nanos = ParsePositiveDuration(StrCat("heartbeat.", key),
                                       field.second.IsScalar() ? ScalarText(field.second) : "?");
    if (!nanos.ok())
      return ErrorAt(source, field.second.Mark(), std::string(nanos.status().message()));
    (key == "interval" ? plan->heartbeat_interval_nanos : plan->heartbeat_timeout_nanos) = *nanos;
  }
  if (plan->heartbeat_interval_nanos > 0 && plan->heartbeat_timeout_nanos > 0 &&
      plan->heartbeat_timeout_nanos < 2 * plan->heartbeat_interval_nanos) {
    return ErrorAt(source, node.Mark(),
                   "heartbeat.timeout must be at least twice heartbeat.interval");
  }
  return absl::OkStatus();
}

StatusOr<std::vector<std::string>> ParseHooks(const YAML::Node& node, std::string_view source,
                                              std::string_view what) {
  std::vector<std::string> lines;
  if (node.IsScalar()) return std::vector<std::string>{ScalarText(node)};
  if (!node.IsSequence()) {
    return ErrorAt(source, node.Mark(), StrCat("'", what, "' must be a list of command lines"));
  }
  for (const auto& line : node) {
    if (!line.IsScalar() || ScalarText(line).empty()) {
      return ErrorAt(source, line.Mark(), StrCat("each '", what, "' entry must be a command line"));
    }
    lines.push_back(ScalarText(line));
  }
  return lines;
}

StatusOr<std::vector<SweepAxis>> ParseSweep(const YAML::Node& node, std::string_view source) {
  std::vector<SweepAxis> axes;
  if (!node.IsMap() || node.size() == 0) {
    return ErrorAt(source, node.Mark(),
                   "'sweep' must map parameter names to lists of values, such as "
                   "{read_ahead_kb: [128, 4096]}");
  }
  for (const auto& field : node) {
    SweepAxis axis;
    axis.name = ScalarText(field.first);
    if (!field.second.IsSequence() || field.second.size() == 0) {
      return ErrorAt(source, field.second.Mark(),
                     StrCat("sweep '", axis.name, "' must be a non-empty list of values"));
    }
    for (const auto& value : field.second) {
      if (!value.IsScalar()) {
        return ErrorAt(source, value.Mark(),
                       StrCat("sweep '", axis.name, "': values must be single values"));
      }
      axis.values.push_back(ScalarText(value));
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

// Every sweep axis must change something, and every point must give valid phases.
Status CheckSweep(const Plan& plan, const YAML::Node& root, std::string_view source) {
  for (const SweepAxis& axis : plan.sweep) {
    const YAML::Mark mark = root["sweep"][axis.name].Mark();
    bool used = common::IsTuningKnob(axis.name) || axis.name == kMemoryLimitKey ||
                axis.name == kMemoryLimitFallbackKey;
    for (const PhasePlan& phase : plan.phases) {
      const WorkloadKind* kind = KindOf(phase.spec);
      if (kind != nullptr && kind->options().Find(axis.name) != nullptr) used = true;
    }
    const std::string placeholder = StrCat("{", axis.name, "}");
    for (const auto* hooks : {&plan.setup, &plan.teardown}) {
      for (const std::string& line : *hooks) {
        if (line.find(placeholder) != std::string::npos) used = true;
      }
    }
    if (!used) {
      return ErrorAt(source, mark,
                     StrCat("sweep '", axis.name,
                            "' changes nothing: it is no parameter of the "
                            "plan's workloads nor memory_limit, no tuning knob (",
                            common::kTuningKnobNames, "), and no hook uses {", axis.name, "}"));
    }
  }
  for (const SweepPoint& point : SweepPoints(plan)) {
    auto phases = PhasesAt(plan, point, 0);
    if (!phases.ok()) {
      return ErrorAt(source, root["sweep"].Mark(),
                     StrCat("at ", DescribeSweepPoint(point), ": ", phases.status().message()));
    }
    for (const auto* hooks : {&plan.setup, &plan.teardown}) {
      for (const std::string& line : *hooks) {
        auto expanded = ExpandHook(line, point);
        if (!expanded.ok()) {
          return ErrorAt(source, root[hooks == &plan.setup ? "setup" : "teardown"].Mark(),
                         std::string(expanded.status().message()));
        }
      }
    }
  }
  return absl::OkStatus();
}

StatusOr<Plan> ParseYaml(const YAML::Node& root, std::string_view source) {
  if (!root.IsMap()) return ErrorAt(source, root.Mark(), "a plan must be a map with 'phases:'");
  Plan plan;
  std::string target;
  PhaseDefaults defaults;
  defaults.set_cache(stormark::v1::CACHE_KEEP);
  static constexpr std::string_view kKnown[] = {"agents",
                                                "hosts",
                                                "target",
                                                "mode",
                                                "cache",
                                                "repeat",
                                                "sweep",
                                                "setup",
                                                "teardown",
                                                "phases",
                                                "heartbeat",
                                                "deadline",
                                                "prepare_deadline",
                                                kStartSpreadLimitKey,
                                                "tls",
                                                "agents_dns",
                                                "inventory",
                                                kMemoryLimitKey,
                                                kMemoryLimitFallbackKey};
  for (const auto& field : root) {
    const std::string key = ScalarText(field.first);
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      return ErrorAt(source, field.first.Mark(),
                     StrCat("unknown field '", key,
                            "' (known: agents, hosts, agents_dns, inventory, tls, target, mode, "
                            "cache, memory_limit, memory_limit_if_unavailable, repeat, sweep, "
                            "setup, teardown, phases, heartbeat, deadline, prepare_deadline, "
                            "start_spread_limit)"));
    }
  }
  if (const YAML::Node mode = root["mode"]) {
    auto parsed = ParseRunMode(mode.IsScalar() ? ScalarText(mode) : "?");
    if (!parsed.ok()) return ErrorAt(source, mode.Mark(), std::string(parsed.status().message()));
    plan.mode = *parsed;
  }
  if (const YAML::Node node = root["cache"]) {
    auto mode = ParseCacheMode(node.IsScalar() ? ScalarText(node) : "?");
    if (!mode.ok()) return ErrorAt(source, node.Mark(), std::string(mode.status().message()));
    defaults.set_cache(*mode);
  }
  for (std::string_view key : {kMemoryLimitKey, kMemoryLimitFallbackKey}) {
    const YAML::Node node = root[std::string(key)];
    if (!node) continue;
    const Status set = SetPhaseParameter(key, node.IsScalar() ? ScalarText(node) : "?", &defaults);
    if (!set.ok()) return ErrorAt(source, node.Mark(), std::string(set.message()));
  }
  if (const YAML::Node node = root["repeat"]) {
    const std::string text = node.IsScalar() ? ScalarText(node) : "?";
    char* end = nullptr;
    const long n = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || n < 1 || n > 1000) {
      return ErrorAt(source, node.Mark(), StrCat("bad repeat '", text, "': expected 1 to 1000"));
    }
    plan.repeat = static_cast<int>(n);
  }
  RETURN_IF_ERROR(ParseFleetAccess(root, source, &plan));
  if (root["agents"] && root["hosts"]) {
    return ErrorAt(source, root["hosts"].Mark(), "give 'hosts' or 'agents', not both");
  }
  for (const char* key : {"agents", "hosts"}) {
    const YAML::Node list = root[key];
    if (!list) continue;
    if (!list.IsSequence()) {
      return ErrorAt(source, list.Mark(), StrCat("'", key, "' must be a list of hosts"));
    }
    for (const auto& entry : list) {
      ASSIGN_OR_RETURN(HostPlan host, ParseHost(entry, source));
      for (const HostPlan& earlier : plan.hosts) {
        if (earlier.name == host.name) {
          return ErrorAt(source, entry.Mark(), StrCat("host name '", host.name, "' is used twice"));
        }
      }
      plan.hosts.push_back(std::move(host));
    }
  }
  if (const YAML::Node t = root["target"]) {
    if (!t.IsScalar() || !common::IsValidName(ScalarText(t))) {
      return ErrorAt(source, t.Mark(), "'target' must be a target name");
    }
    target = ScalarText(t);
  }
  for (const char* key : {"setup", "teardown"}) {
    if (const YAML::Node node = root[key]) {
      ASSIGN_OR_RETURN(auto lines, ParseHooks(node, source, key));
      (std::string_view(key) == "setup" ? plan.setup : plan.teardown) = std::move(lines);
    }
  }
  if (const YAML::Node node = root["sweep"]) {
    ASSIGN_OR_RETURN(plan.sweep, ParseSweep(node, source));
  }
  const YAML::Node phases = root["phases"];
  if (!phases || !phases.IsSequence() || phases.size() == 0) {
    return ErrorAt(source, phases ? phases.Mark() : root.Mark(),
                   "'phases' must be a non-empty list");
  }
  for (size_t i = 0; i < phases.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<PhasePlan> made,
                     ParsePhase(phases[i], i, target, defaults, source, &plan.notes,
                                plan.hosts.empty() ? nullptr : &plan.hosts.front()));
    for (PhasePlan& phase : made) {
      for (const auto& earlier : plan.phases) {
        if (earlier.name == phase.name) {
          return ErrorAt(source, phases[i].Mark(),
                         StrCat("phase name '", phase.name, "' is used twice"));
        }
      }
      plan.phases.push_back(std::move(phase));
    }
  }
  if (const YAML::Node node = root["heartbeat"])
    RETURN_IF_ERROR(ParseHeartbeat(node, source, &plan));
  for (const char* key : {"deadline", "prepare_deadline"}) {
    const YAML::Node node = root[key];
    if (!node) continue;
    auto nanos = ParsePositiveDuration(key, node.IsScalar() ? ScalarText(node) : "?");
    if (!nanos.ok()) return ErrorAt(source, node.Mark(), std::string(nanos.status().message()));
    for (PhasePlan& phase : plan.phases) {
      int64_t& field =
          std::string_view(key) == "deadline" ? phase.deadline_nanos : phase.prepare_deadline_nanos;
      if (field == 0) field = *nanos;
    }
  }
  if (const YAML::Node node = root[std::string(kStartSpreadLimitKey)]) {
    auto limit = ParseStartSpreadLimit(node.IsScalar() ? ScalarText(node) : "?");
    if (!limit.ok()) return ErrorAt(source, node.Mark(), std::string(limit.status().message()));
    for (PhasePlan& phase : plan.phases) {
      if (phase.start_spread_limit == 0) phase.start_spread_limit = *limit;
    }
  }
  RETURN_IF_ERROR(CheckSweep(plan, root, source));
  return plan;
}

}  // namespace

StatusOr<Plan> ParsePlan(std::string_view yaml, std::string_view source) {
  if (fio::LooksLikeJobFile(yaml)) {
    return absl::InvalidArgumentError(
        StrCat(source, ": this is a fio job file, not a plan: run it with stormark run --fio ",
               source, " (stormark fio --check ", source, " shows what it runs)"));
  }
  // yaml-cpp reports malformed input and failed conversions by throwing; they stop here.
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    if (!root.IsDefined() || root.IsNull()) {
      return absl::InvalidArgumentError(StrCat(source, ": empty plan; it needs 'phases:'"));
    }
    return ParseYaml(root, source);
  } catch (const YAML::Exception& e) {
    return ErrorAt(source, e.mark, e.msg);
  }
}

StatusOr<Plan> LoadPlan(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, common::ReadTextFile(path, "plan"));
  return ParsePlan(text, path);
}

}  // namespace stormark::controller
