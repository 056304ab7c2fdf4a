#include "controller/plan/plan.h"

#include <exception>
#include <string>

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller {

using common::Status;
using common::StatusOr;
using common::StrCat;
using stormark::v1::StreamSpec;

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
      StrCat("bad cache '", text,
             "': use keep, sync (write back dirty pages first) or drop "
             "(sync, then drop the page cache)"));
}

StatusOr<double> ParseStartSpreadLimit(std::string_view text) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(StrCat("bad ", kStartSpreadLimitKey, " '", text,
                                             "': give a share of the phase, such as 1%"));
  };
  if (!text.ends_with('%')) return bad();
  const std::string number(common::Trim(text.substr(0, text.size() - 1)));
  double percent = 0;
  size_t used = 0;
  try {
    percent = std::stod(number, &used);
  } catch (const std::exception&) {
    return bad();
  }
  if (used != number.size() || !(percent > 0) || percent > 100) return bad();
  return percent / 100;
}

Status SetPhaseParameter(std::string_view key, std::string_view value,
                         stormark::v1::PhaseSpec* spec) {
  if (key == kMemoryLimitKey) {
    if (value == "none") {
      spec->clear_memory_limit_bytes();
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(uint64_t bytes, common::ParseSizeOf(key, value));
    if (bytes < kMinMemoryLimitBytes) {
      return absl::InvalidArgumentError(StrCat("bad memory_limit '", value, "': at least ",
                                               common::FormatBytes(kMinMemoryLimitBytes),
                                               " (the agent itself runs under it), or none"));
    }
    spec->set_memory_limit_bytes(bytes);
    return absl::OkStatus();
  }
  if (key == kMemoryLimitFallbackKey) {
    if (value != "fail" && value != "run_unlimited") {
      return absl::InvalidArgumentError(
          StrCat("bad ", key, " '", value,
                 "': use fail (the phase fails when the agent cannot apply the limit) or "
                 "run_unlimited (it runs without the limit, with a note)"));
    }
    spec->set_memory_limit_optional(value == "run_unlimited");
    return absl::OkStatus();
  }
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
  RETURN_IF_ERROR(kind->options().Set(key, value, spec));
  // A run group of fio jobs: the setting holds for every job of it.
  if (spec->has_randio()) {
    for (stormark::v1::RandioSpec& job : *spec->mutable_randio()->mutable_group()) {
      stormark::v1::PhaseSpec one;
      *one.mutable_randio() = std::move(job);
      const Status set = kind->options().Set(key, value, &one);
      job = std::move(*one.mutable_randio());
      RETURN_IF_ERROR(common::Annotate(set, StrCat("job '", job.name(), "'")));
    }
  }
  return absl::OkStatus();
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
  if (kind == nullptr) return "unknown workload";
  std::string text = kind->describe(spec);
  if (spec.memory_limit_bytes() != 0) {
    text += StrCat(", memory limit ", common::FormatBytes(spec.memory_limit_bytes()),
                   spec.memory_limit_optional() ? " (or none where it cannot be applied)" : "");
  }
  return text;
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

}  // namespace stormark::controller
