#include "controller/plan.h"

#include <fstream>
#include <sstream>

#include "common/spec_check.h"
#include "controller/bonnie_params.h"
#include "common/strings.h"
#include "common/units.h"
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
                               std::string_view source) {
  if (!node.IsMap()) {
    return ErrorAt(source, node.Mark(), StrCat("phase ", index + 1, " must be a map"));
  }
  PhasePlan phase;
  phase.name = StrCat("phase", index + 1);
  phase.target = target;
  const YAML::Node workload = node["workload"];
  if (!workload) {
    return ErrorAt(source, node.Mark(),
                   StrCat("phase ", index + 1, ": missing 'workload' (known: stream, bonnie)"));
  }
  const std::string kind = workload.IsScalar() ? ScalarText(workload) : "?";
  if (kind != "stream" && kind != "bonnie") {
    return ErrorAt(source, workload.Mark(),
                   StrCat("phase ", index + 1, ": unknown workload '", kind,
                          "' (known: stream, bonnie)"));
  }
  if (node["name"]) phase.name = ScalarText(node["name"]);
  const std::string label = StrCat("phase '", phase.name, "'");
  if (!common::IsValidName(phase.name)) {
    return ErrorAt(source, node["name"].Mark(),
                   StrCat(label, ": name must be 1-64 characters of A-Z a-z 0-9 . _ -"));
  }

  if (kind == "stream") {
    StreamSpec* stream = phase.spec.mutable_stream();
    *stream = DefaultPlan().phases[0].spec.stream();
    stream->set_fdatasync(false);
  } else {
    phase.spec.mutable_bonnie();
  }
  bool rw_given = kind != "stream";
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
    if (key == "rw") rw_given = true;
    Status status = SetWorkloadParameter(key, value, &phase.spec);
    if (!status.ok()) return ErrorAt(source, mark, StrCat(label, ": ", status.message()));
  }
  if (!rw_given) {
    return ErrorAt(source, node.Mark(), StrCat(label, ": missing 'rw' (write or read)"));
  }
  Status valid = ValidatePhase(phase);
  if (!valid.ok()) return ErrorAt(source, node.Mark(), StrCat(label, ": ", valid.message()));
  return phase;
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
    ASSIGN_OR_RETURN(PhasePlan phase, ParsePhase(phases[i], i, target, source));
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

Status SetWorkloadParameter(std::string_view key, std::string_view value,
                            stormark::v1::PhaseSpec* spec) {
  if (spec->has_bonnie()) return SetBonnieParameter(key, value, spec->mutable_bonnie());
  return SetStreamParameter(key, value, spec->mutable_stream());
}

std::string PhasePlan::Describe() const {
  if (spec.has_bonnie()) return DescribeBonnie(spec.bonnie());
  if (!spec.has_stream()) return "unknown workload";
  const StreamSpec& s = spec.stream();
  std::string text = StrCat("stream ", s.direction() == StreamSpec::READ ? "read" : "write", " ",
                            common::FormatBytes(s.size_bytes()), ", bs ",
                            common::FormatBytes(s.block_size()));
  if (s.direct()) text += ", direct";
  if (s.fdatasync()) text += ", fdatasync";
  return text;
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

Status SetStreamParameter(std::string_view key, std::string_view value, StreamSpec* spec) {
  if (key == "rw") {
    if (value == "write") {
      spec->set_direction(StreamSpec::WRITE);
    } else if (value == "read") {
      spec->set_direction(StreamSpec::READ);
      spec->set_fdatasync(false);
    } else {
      return absl::InvalidArgumentError(StrCat("bad rw '", value, "': use write or read"));
    }
    return absl::OkStatus();
  }
  if (key == "size") {
    ASSIGN_OR_RETURN(uint64_t size, common::ParseSize(value));
    spec->set_size_bytes(size);
    return absl::OkStatus();
  }
  if (key == "bs") {
    StatusOr<uint64_t> parsed = common::ParseSize(value);
    if (!parsed.ok()) {
      // ParseSize says "bad size '...': why"; name the parameter this value was given for.
      const std::string prefix = StrCat("bad size '", value, "'");
      std::string message(parsed.status().message());
      if (message.starts_with(prefix)) message.erase(0, prefix.size());
      return absl::InvalidArgumentError(StrCat("bad bs '", value, "'", message));
    }
    const uint64_t bs = *parsed;
    if (bs > UINT32_MAX) return absl::InvalidArgumentError(StrCat("bad bs '", value, "': too large"));
    spec->set_block_size(static_cast<uint32_t>(bs));
    return absl::OkStatus();
  }
  if (key == "direct") {
    ASSIGN_OR_RETURN(bool direct, common::ParseBool(key, value));
    spec->set_direct(direct);
    return absl::OkStatus();
  }
  if (key == "fdatasync") {
    ASSIGN_OR_RETURN(bool sync, common::ParseBool(key, value));
    spec->set_fdatasync(sync);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      StrCat("unknown stream parameter '", key, "' (known: rw, size, bs, direct, fdatasync)"));
}

Status ValidatePhase(const PhasePlan& phase) {
  if (!common::IsValidName(phase.name)) {
    return absl::InvalidArgumentError(
        StrCat("phase name '", phase.name, "' must be 1-64 characters of A-Z a-z 0-9 . _ -"));
  }
  if (phase.spec.has_bonnie()) return common::CheckBonnieSpec(phase.spec.bonnie());
  if (!phase.spec.has_stream()) return absl::InvalidArgumentError("no workload");
  return common::CheckStreamSpec(phase.spec.stream());
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
