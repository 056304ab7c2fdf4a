#include "controller/run/run_options.h"

#include <algorithm>
#include <cstdlib>

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "controller/fio/fio_import.h"
#include "controller/plan/plan_sweep.h"
#include "controller/workloads/stream/stream_params.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// One --set KEY=VALUE. KEY is a parameter for every phase that takes it, or PHASE.KEY for
// the phase named PHASE, or phases.N.KEY for the N-th phase (0-based); "repeat" is the
// plan's. A setting that no phase takes is an error, never silently ignored.
// `where` names the setting in errors: "--set size=10X", or "--size 10X" for its own flag.
Status ApplySetting(const std::string& key, const std::string& value, const std::string& where,
                    Plan* plan) {
  if (key == "repeat") {
    char* end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || n < 1 || n > 1000) {
      return absl::InvalidArgumentError(StrCat(where, ": expected 1 to 1000"));
    }
    plan->repeat = static_cast<int>(n);
    return absl::OkStatus();
  }
  std::string scope, param = key;
  if (key.starts_with("phases.")) {
    const size_t dot = key.find('.', 7);
    if (dot == std::string::npos) {
      return absl::InvalidArgumentError(StrCat(where, ": expected phases.N.KEY"));
    }
    const std::string index = key.substr(7, dot - 7);
    char* end = nullptr;
    const unsigned long n = std::strtoul(index.c_str(), &end, 10);
    if (index.empty() || *end != '\0' || n >= plan->phases.size()) {
      return absl::InvalidArgumentError(
          StrCat(where, ": the plan has phases 0 to ", plan->phases.size() - 1));
    }
    scope = plan->phases[n].name;
    param = key.substr(dot + 1);
  } else if (const size_t dot = key.rfind('.'); dot != std::string::npos) {
    scope = key.substr(0, dot);
    param = key.substr(dot + 1);
  }
  int applied = 0;
  std::string phases;
  for (PhasePlan& phase : plan->phases) {
    const WorkloadKind* kind = KindOf(phase.spec);
    phases += StrCat(phases.empty() ? "" : ", ", phase.name, " (", kind ? kind->name : "?", ")");
    if (!scope.empty() && phase.name != scope) continue;
    Status s = SetPhaseParameter(param, value, &phase.spec);
    if (absl::IsNotFound(s)) continue;
    if (!s.ok())
      return absl::InvalidArgumentError(StrCat(where, ": phase '", phase.name, "': ", s.message()));
    ++applied;
  }
  if (applied > 0) return absl::OkStatus();
  if (!scope.empty() && std::none_of(plan->phases.begin(), plan->phases.end(),
                                     [&](const PhasePlan& p) { return p.name == scope; })) {
    return absl::InvalidArgumentError(
        StrCat(where, ": no phase '", scope, "' (phases: ", phases, ")"));
  }
  return absl::InvalidArgumentError(StrCat(where, ": no phase takes '", param,
                                           "' (phases: ", phases,
                                           "; tuning knobs: ", common::kTuningKnobNames, ")"));
}

}  // namespace

// Applies the workload flags to the plan. Fails on a flag that cannot apply.
Status ApplyFlags(const RunOptions& options, Plan* plan) {
  struct Setting {
    std::string key, value, where;
  };
  std::vector<Setting> params;
  if (options.size) params.push_back({"size", *options.size, StrCat("--size ", *options.size)});
  if (options.bs) params.push_back({"bs", *options.bs, StrCat("--bs ", *options.bs)});
  if (options.direct) {
    params.push_back({"direct", *options.direct ? "true" : "false",
                      *options.direct ? "--direct" : "--no-direct"});
  }
  if (options.fdatasync) {
    params.push_back({"fdatasync", *options.fdatasync ? "true" : "false",
                      *options.fdatasync ? "--fdatasync" : "--no-fdatasync"});
  }

  for (const std::string& assignment : options.sets) {
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          StrCat("--set '", assignment, "': expected KEY=VALUE, such as --set files=16:0:0:1"));
    }
    params.push_back(
        {assignment.substr(0, eq), assignment.substr(eq + 1), StrCat("--set ", assignment)});
  }
  if (!options.plan_path.empty() && options.workload) {
    return absl::InvalidArgumentError(
        "--workload cannot be combined with --plan: the plan's phases name their workloads");
  }
  if (!options.fio_path.empty()) {
    for (auto [given, flag] : {std::pair{!options.plan_path.empty(), "--plan"},
                               std::pair{options.workload.has_value(), "--workload"},
                               std::pair{!options.postmark_config.empty(), "--postmark-config"},
                               std::pair{options.rw.has_value(), "--rw"}}) {
      if (given) {
        return absl::InvalidArgumentError(
            StrCat("--fio cannot be combined with ", flag, ": the job file says what runs"));
      }
    }
    // Read as the first host would; each host reads it for itself before the run
    // (fio_hosts.h) when it depends on the host.
    fio::FioHost first;
    if (!options.agents.empty()) {
      first.name = options.agents.front();
    } else if (!plan->hosts.empty()) {
      first = {plan->hosts.front().name, plan->hosts.front().labels, {}};
    }
    ASSIGN_OR_RETURN(fio::FioImport imported,
                     fio::ImportJobFile(options.fio_path, options.fio_sections, first));
    fio::KeepOrigins(options.fio_path, options.fio_sections, &imported);
    plan->phases = std::move(imported.phases);
    plan->notes.insert(plan->notes.end(), imported.notes.begin(), imported.notes.end());
    for (const std::string& w : imported.warnings) plan->notes.push_back(StrCat("warning: ", w));
  } else if (!options.fio_sections.empty()) {
    return absl::InvalidArgumentError("--section selects jobs of a --fio job file");
  } else if (!options.postmark_config.empty()) {
    if (!options.plan_path.empty()) {
      return absl::InvalidArgumentError(
          "--postmark-config cannot be combined with --plan: give the script to a postmark "
          "phase as `config: FILE`");
    }
    // The script's own workload: the one that reads such a file (WorkloadKind::load_config).
    const WorkloadKind* reader = FindWorkloadKind(options.workload.value_or("postmark"));
    if (reader == nullptr || reader->load_config == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("--postmark-config runs the postmark workload, not ", *options.workload));
    }
    if (options.rw) return absl::InvalidArgumentError("--rw is for the stream workload");
    PhasePlan phase;
    phase.name = std::string(reader->name);
    reader->init(&phase.spec);
    ASSIGN_OR_RETURN(plan->phases, PhasesFromConfig(phase, options.postmark_config, &plan->notes));
  } else if (options.workload &&
             FindWorkloadKind(*options.workload) != KindOf(DefaultPlan().phases[0].spec)) {
    // A workload other than the default plan's: one phase of it.
    const WorkloadKind* kind = FindWorkloadKind(*options.workload);
    if (kind == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("unknown workload '", *options.workload, "' (known: ", WorkloadNames(), ")"));
    }
    // As --set rw=...: the workload's own pattern (randio's randread, say), or one line
    // saying that it takes none.
    if (options.rw)
      params.insert(params.begin(), {"rw", *options.rw, StrCat("--rw ", *options.rw)});
    PhasePlan phase;
    phase.name = std::string(kind->name);
    kind->init(&phase.spec);
    plan->phases = {phase};
  } else if (options.plan_path.empty() && options.rw) {
    // A single phase described by the flags alone.
    if (*options.rw != "read" && *options.rw != "write") {
      return absl::InvalidArgumentError(
          StrCat("--rw ", *options.rw, ": the stream workload reads or writes (--rw read, --rw ",
                 "write); for random or mixed I/O add --workload randio"));
    }
    PhasePlan phase = DefaultPlan().phases[0];
    phase.name = *options.rw == "read" ? "seq-read" : "seq-write";
    RETURN_IF_ERROR(SetStreamParameter("rw", *options.rw, phase.spec.mutable_stream()));
    if (*options.rw == "write" && !options.fdatasync)
      phase.spec.mutable_stream()->set_fdatasync(true);
    plan->phases = {phase};
  } else if (options.rw) {
    return absl::InvalidArgumentError(
        "--rw cannot be combined with --plan: the plan's phases say rw themselves");
  }
  for (const Setting& p : params) RETURN_IF_ERROR(ApplySetting(p.key, p.value, p.where, plan));
  for (PhasePlan& phase : plan->phases) {
    if (options.target) phase.target = *options.target;
    if (options.cache) {
      ASSIGN_OR_RETURN(stormark::v1::CacheMode mode, ParseCacheMode(*options.cache));
      phase.spec.set_cache(mode);
    }
    RETURN_IF_ERROR(common::Annotate(ValidatePhase(phase), StrCat("phase '", phase.name, "'")));
  }
  // Every sweep point must still make valid phases.
  for (const SweepPoint& point : SweepPoints(*plan)) {
    auto phases = PhasesAt(*plan, point, 0);
    if (!phases.ok()) {
      return common::Annotate(phases.status(),
                              StrCat("at sweep point ", DescribeSweepPoint(point)));
    }
  }
  return absl::OkStatus();
}

// The fleet's options: the plan's heartbeat and deadlines, overridden by the flags.
StatusOr<FleetOptions> MakeFleetOptions(const RunOptions& options, Plan* plan) {
  FleetOptions fleet;
  fleet.fail_fast = options.fail_fast;
  HeartbeatOptions& hb = fleet.heartbeat;
  if (plan->heartbeat_interval_nanos > 0) hb.interval_nanos = plan->heartbeat_interval_nanos;
  if (plan->heartbeat_timeout_nanos > 0) hb.timeout_nanos = plan->heartbeat_timeout_nanos;
  struct Flag {
    const char* name;
    const std::optional<std::string>& value;
    int64_t* field;
  };
  int64_t deadline = 0, prepare_deadline = 0;
  for (const Flag& flag :
       {Flag{"--heartbeat-interval", options.heartbeat_interval, &hb.interval_nanos},
        Flag{"--heartbeat-timeout", options.heartbeat_timeout, &hb.timeout_nanos},
        Flag{"--deadline", options.deadline, &deadline},
        Flag{"--prepare-deadline", options.prepare_deadline, &prepare_deadline}}) {
    if (!flag.value) continue;
    auto nanos = common::ParseDurationNanos(*flag.value);
    if (!nanos.ok() || *nanos <= 0) {
      return absl::InvalidArgumentError(StrCat(
          flag.name, " ", *flag.value, ": expected a duration above 0, such as 5s or 500ms"));
    }
    *flag.field = *nanos;
  }
  if (hb.timeout_nanos < 2 * hb.interval_nanos) {
    return absl::InvalidArgumentError(
        StrCat("the heartbeat timeout (",
               common::FormatDurationNanos(static_cast<double>(hb.timeout_nanos)),
               ") must be at least twice the interval (",
               common::FormatDurationNanos(static_cast<double>(hb.interval_nanos)), ")"));
  }
  if (hb.timeout_nanos > int64_t{3600} * 1'000'000'000) {
    return absl::InvalidArgumentError("the heartbeat timeout must be at most 1 h");
  }
  for (PhasePlan& phase : plan->phases) {
    if (deadline > 0) phase.deadline_nanos = deadline;
    if (prepare_deadline > 0) phase.prepare_deadline_nanos = prepare_deadline;
  }
  return fleet;
}

// How `stormark results list` names a run: --label, else the plan file, else the phases.
std::string RunLabel(const RunOptions& options, const Plan& plan) {
  if (!options.label.empty()) return options.label;
  if (!options.plan_path.empty()) return options.plan_path;
  std::vector<std::string_view> names;  // Each once: repetitions share a name.
  std::string label;
  for (const PhasePlan& phase : plan.phases) {
    if (std::find(names.begin(), names.end(), phase.name) != names.end()) continue;
    names.push_back(phase.name);
    label += StrCat(label.empty() ? "" : ", ", phase.name);
  }
  return label;
}

}  // namespace stormark::controller
