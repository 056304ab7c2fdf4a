#include "controller/plan.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/text_file.h"
#include "common/units.h"
#include "controller/workloads/workload_kinds.h"
#include "yaml-cpp/yaml.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;
using stormark::v1::StreamSpec;

Status ErrorAt(std::string_view source, const YAML::Mark& mark, std::string_view what) {
  if (mark.is_null() || mark.line < 0) {
    return absl::InvalidArgumentError(StrCat(source, ": ", what));
  }
  return absl::InvalidArgumentError(StrCat(source, ":", mark.line + 1, ": ", what));
}

std::string ScalarText(const YAML::Node& node) { return node.as<std::string>(); }

// `path` as a plan names it: relative to the plan's directory.
std::string RelativeToPlan(std::string_view source, const std::string& path) {
  const size_t slash = source.rfind('/');
  if (path.empty() || path[0] == '/' || slash == std::string_view::npos) return path;
  return StrCat(source.substr(0, slash + 1), path);
}

// One phase of the plan; several when its `config` asks for several runs.
// A duration above 0 for `key`: "bad deadline '0s': must be above 0".
StatusOr<int64_t> ParsePositiveDuration(std::string_view key, std::string_view value) {
  ASSIGN_OR_RETURN(int64_t nanos, common::ParseDurationOf(key, value));
  if (nanos <= 0) return absl::InvalidArgumentError(StrCat("bad ", key, " '", value, "': must be above 0"));
  return nanos;
}

// `heartbeat: {interval: 2s, timeout: 10s}`.
Status ParseHeartbeat(const YAML::Node& node, std::string_view source, Plan* plan) {
  if (!node.IsMap()) {
    return ErrorAt(source, node.Mark(), "'heartbeat' must be a map such as {interval: 2s, timeout: 10s}");
  }
  for (const auto& field : node) {
    const std::string key = ScalarText(field.first);
    if (key != "interval" && key != "timeout") {
      return ErrorAt(source, field.first.Mark(),
                     StrCat("unknown field 'heartbeat.", key, "' (known: interval, timeout)"));
    }
    auto nanos = ParsePositiveDuration(StrCat("heartbeat.", key),
                                       field.second.IsScalar() ? ScalarText(field.second) : "?");
    if (!nanos.ok()) return ErrorAt(source, field.second.Mark(), std::string(nanos.status().message()));
    (key == "interval" ? plan->heartbeat_interval_nanos : plan->heartbeat_timeout_nanos) = *nanos;
  }
  if (plan->heartbeat_interval_nanos > 0 && plan->heartbeat_timeout_nanos > 0 &&
      plan->heartbeat_timeout_nanos < 2 * plan->heartbeat_interval_nanos) {
    return ErrorAt(source, node.Mark(),
                   "heartbeat.timeout must be at least twice heartbeat.interval");
  }
  return absl::OkStatus();
}

StatusOr<std::vector<PhasePlan>> ParsePhase(const YAML::Node& node, size_t index,
                                            const std::string& target,
                                            stormark::v1::CacheMode cache, std::string_view source,
                                            std::vector<std::string>* notes) {
  if (!node.IsMap()) {
    return ErrorAt(source, node.Mark(), StrCat("phase ", index + 1, " must be a map"));
  }
  PhasePlan phase;
  phase.name = StrCat("phase", index + 1);
  phase.target = target;
  const YAML::Node workload = node["workload"];
  if (!workload) {
    return ErrorAt(source, node.Mark(),
                   StrCat("phase ", index + 1, ": missing 'workload' (known: ", WorkloadNames(),
                          ")"));
  }
  const WorkloadKind* kind = FindWorkloadKind(workload.IsScalar() ? ScalarText(workload) : "?");
  if (kind == nullptr) {
    return ErrorAt(source, workload.Mark(),
                   StrCat("phase ", index + 1, ": unknown workload '",
                          workload.IsScalar() ? ScalarText(workload) : "?", "' (known: ",
                          WorkloadNames(), ")"));
  }
  if (node["name"]) phase.name = ScalarText(node["name"]);
  const std::string label = StrCat("phase '", phase.name, "'");
  if (!common::IsValidName(phase.name)) {
    return ErrorAt(source, node["name"].Mark(),
                   StrCat(label, ": name must be 1-64 characters of A-Z a-z 0-9 . _ -"));
  }

  kind->init(&phase.spec);
  phase.spec.set_cache(cache);
  // The configuration file first, whatever its place in the map: the phase's own parameters
  // override it.
  std::vector<PhasePlan> phases = {phase};
  if (const YAML::Node config = node["config"]) {
    if (kind->load_config == nullptr || !config.IsScalar()) {
      return ErrorAt(source, config.Mark(),
                     StrCat(label, ": 'config' ",
                            kind->load_config == nullptr
                                ? StrCat("is not a ", kind->name, " parameter (postmark has it)")
                                : "must be a file name"));
    }
    auto loaded = PhasesFromConfig(phase, RelativeToPlan(source, ScalarText(config)), notes);
    if (!loaded.ok()) {
      return ErrorAt(source, config.Mark(), StrCat(label, ": ", loaded.status().message()));
    }
    phases = std::move(*loaded);
  }
  for (const auto& field : node) {
    const std::string key = ScalarText(field.first);
    const YAML::Mark mark = field.second.Mark();
    if (key == "name" || key == "workload" || key == "config") continue;
    if (!field.second.IsScalar()) {
      return ErrorAt(source, mark, StrCat(label, ": '", key, "' must be a single value"));
    }
    const std::string value = ScalarText(field.second);
    if (key == "target") {
      if (!common::IsValidName(value)) {
        return ErrorAt(source, mark, StrCat(label, ": bad target name '", value, "'"));
      }
      for (PhasePlan& p : phases) p.target = value;
      continue;
    }
    if (key == "cache") {
      auto mode = ParseCacheMode(value);
      if (!mode.ok()) return ErrorAt(source, mark, StrCat(label, ": ", mode.status().message()));
      for (PhasePlan& p : phases) p.spec.set_cache(*mode);
      continue;
    }
    if (key == "deadline" || key == "prepare_deadline") {
      auto nanos = ParsePositiveDuration(key, value);
      if (!nanos.ok()) return ErrorAt(source, mark, StrCat(label, ": ", nanos.status().message()));
      for (PhasePlan& p : phases) {
        (key == "deadline" ? p.deadline_nanos : p.prepare_deadline_nanos) = *nanos;
      }
      continue;
    }
    for (PhasePlan& p : phases) {
      Status status = SetPhaseParameter(key, value, &p.spec);
      if (absl::IsNotFound(status)) {
        status = absl::InvalidArgumentError(
            StrCat("unknown ", kind->name, " parameter '", key, "' (known: ",
                   kind->options().Names(), "; knobs: ", common::kTuningKnobNames, ")"));
      }
      if (!status.ok()) return ErrorAt(source, mark, StrCat(label, ": ", status.message()));
    }
  }
  for (const Option& option : kind->options().options()) {
    if (!option.required) continue;
    bool given = node[std::string(option.name)].IsDefined();
    for (std::string_view alias : option.aliases) given |= node[std::string(alias)].IsDefined();
    if (!given) {
      return ErrorAt(source, node.Mark(),
                     StrCat(label, ": missing '", option.name, "' (", kind->name, " needs it)"));
    }
  }
  for (const PhasePlan& p : phases) {
    Status valid = ValidatePhase(p);
    if (!valid.ok()) {
      return ErrorAt(source, node.Mark(), StrCat("phase '", p.name, "': ", valid.message()));
    }
  }
  return phases;
}

StatusOr<std::vector<std::pair<std::string, std::string>>> ParseLabels(const YAML::Node& node,
                                                                      std::string_view source,
                                                                      std::string_view host) {
  std::vector<std::pair<std::string, std::string>> labels;
  if (!node.IsMap()) {
    return ErrorAt(source, node.Mark(),
                   StrCat("host '", host, "': 'labels' must be a map such as {transport: aoe}"));
  }
  for (const auto& label : node) {
    if (!label.second.IsScalar()) {
      return ErrorAt(source, label.second.Mark(),
                     StrCat("host '", host, "': label '", ScalarText(label.first),
                            "' must be a single value"));
    }
    labels.emplace_back(ScalarText(label.first), ScalarText(label.second));
  }
  return labels;
}

StatusOr<HostPlan> ParseHost(const YAML::Node& node, std::string_view source) {
  HostPlan host;
  if (node.IsScalar()) {
    host.name = host.address = ScalarText(node);
    return host;
  }
  if (!node.IsMap()) {
    return ErrorAt(source, node.Mark(), "each host must be a map such as {name: db1, address: db1:7420}");
  }
  for (const auto& field : node) {
    const std::string key = ScalarText(field.first);
    if (key != "name" && key != "address" && key != "labels" && key != "target" &&
        key != "tls_name") {
      return ErrorAt(source, field.first.Mark(),
                     StrCat("unknown host field '", key,
                            "' (known: name, address, target, labels, tls_name)"));
    }
    if (key != "labels" && !field.second.IsScalar()) {
      return ErrorAt(source, field.second.Mark(), StrCat("host '", key, "' must be a single value"));
    }
  }
  if (!node["address"]) return ErrorAt(source, node.Mark(), "a host needs 'address: HOST:PORT'");
  host.address = ScalarText(node["address"]);
  host.name = node["name"] ? ScalarText(node["name"]) : host.address;
  if (host.name.empty() || host.name.size() > 64) {
    return ErrorAt(source, node["name"].Mark(), "a host name must be 1-64 characters");
  }
  if (const YAML::Node target = node["target"]) {
    host.target = ScalarText(target);
    if (!common::IsValidName(host.target)) {
      return ErrorAt(source, target.Mark(),
                     StrCat("host '", host.name, "': bad target name '", host.target, "'"));
    }
  }
  if (const YAML::Node labels = node["labels"]) {
    ASSIGN_OR_RETURN(host.labels, ParseLabels(labels, source, host.name));
  }
  if (const YAML::Node tls_name = node["tls_name"]) host.tls_name = ScalarText(tls_name);
  return host;
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
        return ErrorAt(source, value.Mark(), StrCat("sweep '", axis.name, "': values must be single values"));
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
    bool used = common::IsTuningKnob(axis.name);
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
                     StrCat("sweep '", axis.name, "' changes nothing: it is no parameter of the "
                            "plan's workloads, no tuning knob (", common::kTuningKnobNames,
                            "), and no hook uses {", axis.name, "}"));
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

// The keys that say how to reach and find the agents: tls, agents_dns, inventory.
Status ParseFleetAccess(const YAML::Node& root, std::string_view source, Plan* plan) {
  if (const YAML::Node tls = root["tls"]) {
    if (!tls.IsMap()) return ErrorAt(source, tls.Mark(), "'tls' must be a map {ca, cert, key}");
    for (const auto& field : tls) {
      const std::string key = ScalarText(field.first);
      std::string* slot = key == "ca"     ? &plan->tls.ca
                          : key == "cert" ? &plan->tls.cert
                          : key == "key"  ? &plan->tls.key
                                          : nullptr;
      if (slot == nullptr || !field.second.IsScalar()) {
        return ErrorAt(source, field.first.Mark(),
                       StrCat("'tls.", key, "': expected ca, cert or key with a file path"));
      }
      *slot = RelativeToPlan(source, ScalarText(field.second));
    }
  }
  for (auto [key, slot] : {std::pair{"agents_dns", &plan->agents_dns},
                           std::pair{"inventory", &plan->inventory}}) {
    const YAML::Node node = root[key];
    if (!node) continue;
    if (!node.IsScalar() || ScalarText(node).empty()) {
      return ErrorAt(source, node.Mark(), StrCat("'", key, "' must be a single value"));
    }
    *slot = ScalarText(node);
  }
  if (!plan->inventory.empty()) plan->inventory = RelativeToPlan(source, plan->inventory);
  return absl::OkStatus();
}

StatusOr<Plan> ParseYaml(const YAML::Node& root, std::string_view source) {
  if (!root.IsMap()) return ErrorAt(source, root.Mark(), "a plan must be a map with 'phases:'");
  Plan plan;
  std::string target;
  stormark::v1::CacheMode cache = stormark::v1::CACHE_KEEP;
  static constexpr std::string_view kKnown[] = {
      "agents",   "hosts",      "target",    "mode",  "cache",      "repeat",
      "sweep",    "setup",      "teardown",  "phases", "heartbeat", "deadline",
      "prepare_deadline", "tls", "agents_dns", "inventory"};
  for (const auto& field : root) {
    const std::string key = ScalarText(field.first);
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      return ErrorAt(source, field.first.Mark(),
                     StrCat("unknown field '", key,
                            "' (known: agents, hosts, agents_dns, inventory, tls, target, mode, "
                            "cache, repeat, sweep, setup, teardown, phases, heartbeat, deadline, "
                            "prepare_deadline)"));
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
    cache = *mode;
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
                     ParsePhase(phases[i], i, target, cache, source, &plan.notes));
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
  if (const YAML::Node node = root["heartbeat"]) RETURN_IF_ERROR(ParseHeartbeat(node, source, &plan));
  for (const char* key : {"deadline", "prepare_deadline"}) {
    const YAML::Node node = root[key];
    if (!node) continue;
    auto nanos = ParsePositiveDuration(key, node.IsScalar() ? ScalarText(node) : "?");
    if (!nanos.ok()) return ErrorAt(source, node.Mark(), std::string(nanos.status().message()));
    for (PhasePlan& phase : plan.phases) {
      int64_t& field = std::string_view(key) == "deadline" ? phase.deadline_nanos
                                                           : phase.prepare_deadline_nanos;
      if (field == 0) field = *nanos;
    }
  }
  RETURN_IF_ERROR(CheckSweep(plan, root, source));
  return plan;
}

}  // namespace

StatusOr<RunMode> ParseRunMode(std::string_view text) {
  if (text == "concurrent") return RunMode::kConcurrent;
  if (text == "sequential") return RunMode::kSequential;
  return absl::InvalidArgumentError(
      StrCat("bad mode '", text, "': use concurrent (all hosts at once) or sequential"));
}

StatusOr<stormark::v1::CacheMode> ParseCacheMode(std::string_view text) {
  if (text == "keep") return stormark::v1::CACHE_KEEP;
  if (text == "sync") return stormark::v1::CACHE_SYNC;
  if (text == "drop") return stormark::v1::CACHE_DROP;
  return absl::InvalidArgumentError(
      StrCat("bad cache '", text, "': use keep, sync (write back dirty pages first) or drop "
             "(sync, then drop the page cache)"));
}

Status SetPhaseParameter(std::string_view key, std::string_view value,
                         stormark::v1::PhaseSpec* spec) {
  if (common::IsTuningKnob(key)) {
    if (value.empty()) return absl::InvalidArgumentError(StrCat("bad ", key, " '': give a value"));
    (*spec->mutable_tuning())[std::string(key)] = std::string(value);
    return absl::OkStatus();
  }
  const WorkloadKind* kind = KindOf(*spec);
  if (kind == nullptr) return absl::InvalidArgumentError("the phase names no workload");
  if (kind->options().Find(key) == nullptr) {
    return absl::NotFoundError(StrCat("no ", kind->name, " parameter or tuning knob '", key, "'"));
  }
  return kind->options().Set(key, value, spec);
}

StatusOr<std::vector<PhasePlan>> PhasesFromConfig(const PhasePlan& phase, const std::string& path,
                                                  std::vector<std::string>* notes) {
  const WorkloadKind* kind = KindOf(phase.spec);
  if (kind == nullptr || kind->load_config == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("a configuration file is for postmark phases, not ",
               kind == nullptr ? "this one" : std::string(kind->name)));
  }
  ASSIGN_OR_RETURN(std::vector<stormark::v1::PhaseSpec> specs,
                   kind->load_config(path, phase.spec, notes));
  std::vector<PhasePlan> phases;
  for (size_t i = 0; i < specs.size(); ++i) {
    PhasePlan one = phase;
    if (specs.size() > 1) one.name = StrCat(phase.name, "-", i + 1);
    one.spec = std::move(specs[i]);
    phases.push_back(std::move(one));
  }
  return phases;
}

std::string PhasePlan::Describe() const {
  const WorkloadKind* kind = KindOf(spec);
  return kind == nullptr ? "unknown workload" : kind->describe(spec);
}

Plan DefaultPlan() {
  Plan plan;
  for (auto direction : {StreamSpec::WRITE, StreamSpec::READ}) {
    PhasePlan phase;
    phase.name = direction == StreamSpec::WRITE ? "seq-write" : "seq-read";
    FindWorkloadKind("stream")->init(&phase.spec);  // Its size and bs.
    StreamSpec* s = phase.spec.mutable_stream();
    s->set_direction(direction);
    s->set_fdatasync(direction == StreamSpec::WRITE);
    plan.phases.push_back(std::move(phase));
  }
  return plan;
}

Status ValidatePhase(const PhasePlan& phase) {
  if (!common::IsValidName(phase.name)) {
    return absl::InvalidArgumentError(
        StrCat("phase name '", phase.name, "' must be 1-64 characters of A-Z a-z 0-9 . _ -"));
  }
  const WorkloadKind* kind = KindOf(phase.spec);
  if (kind == nullptr) return absl::InvalidArgumentError("the phase names no workload");
  return kind->validate(phase.spec);
}

StatusOr<Plan> ParsePlan(std::string_view yaml, std::string_view source) {
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
