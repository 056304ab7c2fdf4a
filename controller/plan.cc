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

StatusOr<PhasePlan> ParsePhase(const YAML::Node& node, size_t index, const std::string& target,
                               stormark::v1::CacheMode cache, std::string_view source) {
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
  for (const auto& field : node) {
    const std::string key = ScalarText(field.first);
    const YAML::Mark mark = field.second.Mark();
    if (key == "name" || key == "workload") continue;
    if (!field.second.IsScalar()) {
      return ErrorAt(source, mark, StrCat(label, ": '", key, "' must be a single value"));
    }
    const std::string value = ScalarText(field.second);
    if (key == "target") {
      if (!common::IsValidName(value)) {
        return ErrorAt(source, mark, StrCat(label, ": bad target name '", value, "'"));
      }
      phase.target = value;
      continue;
    }
    if (key == "cache") {
      auto mode = ParseCacheMode(value);
      if (!mode.ok()) return ErrorAt(source, mark, StrCat(label, ": ", mode.status().message()));
      phase.spec.set_cache(*mode);
      continue;
    }
    Status status = SetWorkloadParameter(key, value, &phase.spec);
    if (!status.ok()) return ErrorAt(source, mark, StrCat(label, ": ", status.message()));
  }
  for (std::string_view required : kind->required) {
    if (!node[std::string(required)]) {
      return ErrorAt(source, node.Mark(),
                     StrCat(label, ": missing '", required, "' (", kind->name, " needs it)"));
    }
  }
  Status valid = ValidatePhase(phase);
  if (!valid.ok()) return ErrorAt(source, node.Mark(), StrCat(label, ": ", valid.message()));
  return phase;
}

StatusOr<Plan> ParseYaml(const YAML::Node& root, std::string_view source) {
  if (!root.IsMap()) return ErrorAt(source, root.Mark(), "a plan must be a map with 'phases:'");
  Plan plan;
  std::string target;
  stormark::v1::CacheMode cache = stormark::v1::CACHE_KEEP;
  for (const auto& field : root) {
    const std::string key = ScalarText(field.first);
    if (key != "agents" && key != "target" && key != "phases" && key != "mode" &&
        key != "cache") {
      return ErrorAt(source, field.first.Mark(),
                     StrCat("unknown field '", key,
                            "' (known: agents, target, mode, cache, phases)"));
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
    ASSIGN_OR_RETURN(PhasePlan phase, ParsePhase(phases[i], i, target, cache, source));
    for (const auto& earlier : plan.phases) {
      if (earlier.name == phase.name) {
        return ErrorAt(source, phases[i].Mark(),
                       StrCat("phase name '", phase.name, "' is used twice"));
      }
    }
    plan.phases.push_back(std::move(phase));
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

StatusOr<stormark::v1::CacheMode> ParseCacheMode(std::string_view text) {
  if (text == "keep") return stormark::v1::CACHE_KEEP;
  if (text == "sync") return stormark::v1::CACHE_SYNC;
  if (text == "drop") return stormark::v1::CACHE_DROP;
  return absl::InvalidArgumentError(
      StrCat("bad cache '", text, "': use keep, sync (write back dirty pages first) or drop "
             "(sync, then drop the page cache)"));
}

Status SetWorkloadParameter(std::string_view key, std::string_view value,
                            stormark::v1::PhaseSpec* spec) {
  const WorkloadKind* kind = KindOf(*spec);
  if (kind == nullptr) return absl::InvalidArgumentError("the phase names no workload");
  return kind->set(key, value, spec);
}

std::string DescribeSweepPoint(const SweepPoint& point) {
  std::string text;
  for (const auto& [key, value] : point) text += StrCat(text.empty() ? "" : " ", key, "=", value);
  return text;
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
