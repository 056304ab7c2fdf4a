// One entry of a plan's `phases:` list: its workload, its configuration file, and its keys.
#include "controller/plan/plan_yaml.h"

#include <string>
#include <vector>

#include "common/spec_check.h"
#include "common/strings.h"
#include "controller/fio/fio_import.h"
#include "controller/workloads/workload_kinds.h"
#include "yaml-cpp/yaml.h"

namespace stormark::controller::plan_yaml {

using common::Status;
using common::StatusOr;
using common::StrCat;

namespace {

// The phases of a `fio: FILE` entry: the job file's run groups, each a randio phase
// (controller/fio/fio_import.h), named after its job (NAME.job with `name:`), on the plan's
// target unless the job names one with filename=; `section:` (a name or a list) keeps only
// those jobs.
StatusOr<std::vector<PhasePlan>> FioPhases(const YAML::Node& node, const std::string& target,
                                           const PhaseDefaults& defaults, std::string_view source,
                                           std::vector<std::string>* notes,
                                           const HostPlan* first_host) {
  const YAML::Node file = node["fio"];
  if (node["workload"]) {
    return ErrorAt(source, node["workload"].Mark(),
                   "a phase gives 'fio: FILE' or 'workload:', not both (a job file's phases are "
                   "randio)");
  }
  if (!file.IsScalar()) return ErrorAt(source, file.Mark(), "'fio' must be a job file's name");
  std::vector<std::string> sections;
  if (const YAML::Node section = node["section"]) {
    if (section.IsScalar()) {
      sections.push_back(ScalarText(section));
    } else if (section.IsSequence()) {
      for (const auto& s : section) sections.push_back(ScalarText(s));
    } else {
      return ErrorAt(source, section.Mark(), "'section' must be a job's name or a list of them");
    }
  }
  const std::string path = RelativeToPlan(source, ScalarText(file));
  const fio::FioHost host = first_host == nullptr
                                ? fio::FioHost{}
                                : fio::FioHost{first_host->name, first_host->labels, {}};
  auto imported = fio::ImportJobFile(path, sections, host);
  if (!imported.ok()) {
    return ErrorAt(source, file.Mark(), std::string(imported.status().message()));
  }
  fio::KeepOrigins(path, sections, &*imported);
  notes->insert(notes->end(), imported->notes.begin(), imported->notes.end());
  for (const std::string& w : imported->warnings) notes->push_back(StrCat("warning: ", w));
  const std::string prefix = node["name"] ? ScalarText(node["name"]) : "";
  for (PhasePlan& p : imported->phases) {
    if (p.target.empty()) p.target = target;
    ApplyPlanDefaults(defaults, &p.spec);
    if (!prefix.empty()) p.name = StrCat(prefix, ".", p.name).substr(0, 64);
  }
  return std::move(imported->phases);
}

}  // namespace

void ApplyPlanDefaults(const PhaseDefaults& defaults, stormark::v1::PhaseSpec* spec) {
  spec->set_cache(defaults.cache());
  spec->set_memory_limit_bytes(defaults.memory_limit_bytes());
  spec->set_memory_limit_optional(defaults.memory_limit_optional());
}

// One phase of the plan; several when its `config` asks for several runs, or its `fio` job
// file for several run groups.
StatusOr<std::vector<PhasePlan>> ParsePhase(const YAML::Node& node, size_t index,
                                            const std::string& target,
                                            const PhaseDefaults& defaults, std::string_view source,
                                            std::vector<std::string>* notes,
                                            const HostPlan* first_host) {
  if (!node.IsMap()) {
    return ErrorAt(source, node.Mark(), StrCat("phase ", index + 1, " must be a map"));
  }
  PhasePlan phase;
  phase.name = StrCat("phase", index + 1);
  phase.target = target;
  const YAML::Node workload = node["workload"];
  std::vector<PhasePlan> phases;
  if (node["fio"]) {
    ASSIGN_OR_RETURN(phases, FioPhases(node, target, defaults, source, notes, first_host));
  } else if (!workload) {
    return ErrorAt(
        source, node.Mark(),
        StrCat("phase ", index + 1, ": missing 'workload' (known: ", WorkloadNames(), ")"));
  }
  const WorkloadKind* kind =
      phases.empty() ? FindWorkloadKind(workload.IsScalar() ? ScalarText(workload) : "?")
                     : KindOf(phases.front().spec);
  if (kind == nullptr) {
    return ErrorAt(source, workload.Mark(),
                   StrCat("phase ", index + 1, ": unknown workload '",
                          workload.IsScalar() ? ScalarText(workload) : "?",
                          "' (known: ", WorkloadNames(), ")"));
  }
  if (node["name"]) phase.name = ScalarText(node["name"]);
  const std::string label = StrCat("phase '", phase.name, "'");
  if (!common::IsValidName(phase.name)) {
    return ErrorAt(source, node["name"].Mark(),
                   StrCat(label, ": name must be 1-64 characters of A-Z a-z 0-9 . _ -"));
  }

  kind->init(&phase.spec);
  ApplyPlanDefaults(defaults, &phase.spec);
  // The configuration file first, whatever its place in the map: the phase's own parameters
  // override it.
  if (phases.empty()) phases = {phase};
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
    if (key == "name" || key == "workload" || key == "config" || key == "fio" || key == "section") {
      continue;
    }
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
    if (key == kStartSpreadLimitKey) {
      auto limit = ParseStartSpreadLimit(value);
      if (!limit.ok()) return ErrorAt(source, mark, StrCat(label, ": ", limit.status().message()));
      for (PhasePlan& p : phases) p.start_spread_limit = *limit;
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
        status = absl::InvalidArgumentError(StrCat("unknown ", kind->name, " parameter '", key,
                                                   "' (known: ", kind->options().Names(),
                                                   "; knobs: ", common::kTuningKnobNames, ")"));
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

}  // namespace stormark::controller::plan_yaml
