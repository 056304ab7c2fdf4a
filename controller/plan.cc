#include "controller/plan.h"

#include <fstream>
#include <sstream>

#include "common/spec_check.h"
#include "common/strings.h"
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
StatusOr<std::vector<PhasePlan>> ParsePhase(const YAML::Node& node, size_t index,
                                            const std::string& target, std::string_view source,
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
    for (PhasePlan& p : phases) {
      Status status = SetWorkloadParameter(key, value, &p.spec);
      if (!status.ok()) return ErrorAt(source, mark, StrCat(label, ": ", status.message()));
    }
  }
  for (std::string_view required : kind->required) {
    if (!node[std::string(required)]) {
      return ErrorAt(source, node.Mark(),
                     StrCat(label, ": missing '", required, "' (", kind->name, " needs it)"));
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

StatusOr<Plan> ParseYaml(const YAML::Node& root, std::string_view source) {
  if (!root.IsMap()) return ErrorAt(source, root.Mark(), "a plan must be a map with 'phases:'");
  Plan plan;
  std::string target;
  for (const auto& field : root) {
    const std::string key = ScalarText(field.first);
    if (key != "agents" && key != "target" && key != "phases" && key != "mode") {
      return ErrorAt(source, field.first.Mark(),
                     StrCat("unknown field '", key, "' (known: agents, target, mode, phases)"));
    }
  }
  if (const YAML::Node mode = root["mode"]) {
    auto parsed = ParseRunMode(mode.IsScalar() ? ScalarText(mode) : "?");
    if (!parsed.ok()) return ErrorAt(source, mode.Mark(), std::string(parsed.status().message()));
    plan.mode = *parsed;
  }
  if (const YAML::Node agents = root["agents"]) {
    if (!agents.IsSequence()) {
      return ErrorAt(source, agents.Mark(), "'agents' must be a list of HOST:PORT");
    }
    for (const auto& a : agents) {
      if (!a.IsScalar()) return ErrorAt(source, a.Mark(), "each agent must be HOST:PORT");
      plan.agents.push_back(ScalarText(a));
    }
  }
  if (const YAML::Node t = root["target"]) {
    if (!t.IsScalar() || !common::IsValidName(ScalarText(t))) {
      return ErrorAt(source, t.Mark(), "'target' must be a target name");
    }
    target = ScalarText(t);
  }
  const YAML::Node phases = root["phases"];
  if (!phases || !phases.IsSequence() || phases.size() == 0) {
    return ErrorAt(source, phases ? phases.Mark() : root.Mark(),
                   "'phases' must be a non-empty list");
  }
  for (size_t i = 0; i < phases.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<PhasePlan> made,
                     ParsePhase(phases[i], i, target, source, &plan.notes));
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
  return plan;
}

}  // namespace

StatusOr<RunMode> ParseRunMode(std::string_view text) {
  if (text == "concurrent") return RunMode::kConcurrent;
  if (text == "sequential") return RunMode::kSequential;
  return absl::InvalidArgumentError(
      StrCat("bad mode '", text, "': use concurrent (all hosts at once) or sequential"));
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

Status SetWorkloadParameter(std::string_view key, std::string_view value,
                            stormark::v1::PhaseSpec* spec) {
  const WorkloadKind* kind = KindOf(*spec);
  if (kind == nullptr) return absl::InvalidArgumentError("the phase names no workload");
  return kind->set(key, value, spec);
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
    StreamSpec* s = phase.spec.mutable_stream();
    s->set_direction(direction);
    s->set_size_bytes(uint64_t{1} << 30);
    s->set_block_size(1u << 20);
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
  std::ifstream in(path);
  if (!in) return common::ErrnoError(StrCat("cannot read plan ", path), errno);
  std::stringstream text;
  text << in.rdbuf();
  return ParsePlan(text.str(), path);
}

}  // namespace stormark::controller
