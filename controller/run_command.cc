#include "controller/run_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <functional>
#include <algorithm>
#include <memory>
#include <random>
#include <algorithm>
#include <cstdlib>

#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/version.h"
#include "controller/agent_client.h"
#include "controller/discovery.h"
#include "controller/workloads/bonnie/bonnie_report.h"
#include "controller/workloads/stream/stream_params.h"
#include "controller/workloads/workload_kinds.h"
#include "controller/environment.h"
#include "controller/fleet.h"
#include "controller/live_progress.h"
#include "controller/local_agent.h"
#include "controller/plan.h"
#include "controller/report_baseline.h"
#include "controller/report_export.h"
#include "controller/report_json.h"
#include "controller/report_table.h"
#include "controller/results/results_store.h"
#include "controller/results/run_journal.h"
#include "controller/run_record.h"
#include "controller/summary.h"
#include "controller/sweep_table.h"
#include "controller/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// "r20261130-023612-3fa9": sortable, unique enough, and a valid phase-id prefix.
std::string NewRunId(int64_t unix_nanos) {
  std::random_device random;
  return fmt::format("r{}-{:04x}", common::FormatUtc(unix_nanos, "%Y%m%d-%H%M%S"),
                     random() & 0xffff);
}

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
      return absl::InvalidArgumentError(StrCat(where, ": the plan has phases 0 to ",
                                               plan->phases.size() - 1));
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
    if (!s.ok()) return absl::InvalidArgumentError(StrCat(where, ": phase '", phase.name, "': ", s.message()));
    ++applied;
  }
  if (applied > 0) return absl::OkStatus();
  if (!scope.empty() &&
      std::none_of(plan->phases.begin(), plan->phases.end(),
                   [&](const PhasePlan& p) { return p.name == scope; })) {
    return absl::InvalidArgumentError(StrCat(where, ": no phase '", scope, "' (phases: ", phases, ")"));
  }
  return absl::InvalidArgumentError(StrCat(where, ": no phase takes '", param, "' (phases: ", phases,
                                           "; tuning knobs: ", common::kTuningKnobNames, ")"));
}

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
    params.push_back({assignment.substr(0, eq), assignment.substr(eq + 1), StrCat("--set ", assignment)});
  }
  if (!options.plan_path.empty() && options.workload) {
    return absl::InvalidArgumentError(
        "--workload cannot be combined with --plan: the plan's phases name their workloads");
  }
  if (!options.postmark_config.empty()) {
    if (!options.plan_path.empty()) {
      return absl::InvalidArgumentError(
          "--postmark-config cannot be combined with --plan: give the script to a postmark "
          "phase as `config: FILE`");
    }
    if (options.workload && *options.workload != "postmark") {
      return absl::InvalidArgumentError(
          StrCat("--postmark-config runs the postmark workload, not ", *options.workload));
    }
    if (options.rw) return absl::InvalidArgumentError("--rw is for the stream workload");
    PhasePlan phase;
    phase.name = "postmark";
    FindWorkloadKind("postmark")->init(&phase.spec);
    ASSIGN_OR_RETURN(plan->phases, PhasesFromConfig(phase, options.postmark_config, &plan->notes));
  } else if (options.workload && *options.workload != "stream") {
    const WorkloadKind* kind = FindWorkloadKind(*options.workload);
    if (kind == nullptr) {
      return absl::InvalidArgumentError(StrCat("unknown workload '", *options.workload,
                                               "' (known: ", WorkloadNames(), ")"));
    }
    if (options.rw) return absl::InvalidArgumentError("--rw is for the stream workload");
    PhasePlan phase;
    phase.name = std::string(kind->name);
    kind->init(&phase.spec);
    plan->phases = {phase};
  } else if (options.plan_path.empty() && options.rw) {
    // A single phase described by the flags alone.
    PhasePlan phase = DefaultPlan().phases[0];
    phase.name = *options.rw == "read" ? "seq-read" : "seq-write";
    RETURN_IF_ERROR(SetStreamParameter("rw", *options.rw, phase.spec.mutable_stream()));
    if (*options.rw == "write" && !options.fdatasync) phase.spec.mutable_stream()->set_fdatasync(true);
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
      return common::Annotate(phases.status(), StrCat("at sweep point ", DescribeSweepPoint(point)));
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
  for (const Flag& flag : {Flag{"--heartbeat-interval", options.heartbeat_interval, &hb.interval_nanos},
                           Flag{"--heartbeat-timeout", options.heartbeat_timeout, &hb.timeout_nanos},
                           Flag{"--deadline", options.deadline, &deadline},
                           Flag{"--prepare-deadline", options.prepare_deadline, &prepare_deadline}}) {
    if (!flag.value) continue;
    auto nanos = common::ParseDurationNanos(*flag.value);
    if (!nanos.ok() || *nanos <= 0) {
      return absl::InvalidArgumentError(StrCat(flag.name, " ", *flag.value,
                                               ": expected a duration above 0, such as 5s or 500ms"));
    }
    *flag.field = *nanos;
  }
  if (hb.timeout_nanos < 2 * hb.interval_nanos) {
    return absl::InvalidArgumentError(
        StrCat("the heartbeat timeout (", common::FormatDurationNanos(static_cast<double>(hb.timeout_nanos)),
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

// The stored end status of a run that ends with exit code `code`.
const char* EndStatus(int code) {
  return code == kExitOk ? kRunCompleted : code == kExitInterrupted ? kRunInterrupted : kRunFailed;
}

// One bonnie++ CSV line per host that finished a bonnie phase, for bon_csv2html and friends.
Status WriteBonnieCsv(const RunRecord& run, const std::string& path) {
  return common::Annotate(common::WriteFileAtomically(path, RunBonnieCsv(run)), "--csv");
}

// Runs each hook line on every usable host at once, in order, stopping at the first line
// that fails anywhere. Prints one line per hook. Returns whether all succeeded.
bool RunHooks(Fleet& fleet, const std::vector<std::string>& lines, const SweepPoint& point,
              const char* what, const std::function<std::string()>& next_id, std::FILE* out) {
  for (size_t i = 0; i < lines.size() && !fleet.halted(); ++i) {
    PhasePlan hook;
    hook.name = StrCat(what, "-", i + 1);
    hook.sweep_point = point;
    stormark::v1::CommandSpec* command = hook.spec.mutable_command();
    command->set_shell(*ExpandHook(lines[i], point));  // Checked with the plan.
    command->set_hook(true);
    const PhaseOutcome outcome = fleet.RunPhase(hook, next_id(), nullptr, RunMode::kConcurrent);
    int64_t longest = 0;
    std::string failures;
    for (const HostOutcome& host : outcome.hosts) {
      if (host.succeeded()) {
        longest = std::max(longest, host.result->elapsed_nanos());
      } else {
        failures += fmt::format("  x {}: {}\n", host.host,
                                host.error.empty() ? "failed" : host.error);
      }
    }
    std::fprintf(out, "  %s `%s`: %s\n%s", what, command->shell().c_str(),
                 failures.empty()
                     ? fmt::format("ok on {} host{} (longest {})", outcome.hosts.size(),
                                   outcome.hosts.size() == 1 ? "" : "s",
                                   common::FormatDurationNanos(static_cast<double>(longest)))
                           .c_str()
                     : "FAILED",
                 failures.c_str());
    std::fflush(out);
    if (!failures.empty()) return false;
  }
  if (!lines.empty()) std::fputs("\n", out);
  return true;
}

}  // namespace

int RunCommand(const RunOptions& options, Interrupts& interrupts, std::FILE* out,
               std::FILE* err) {
  const common::Clock& clock = common::SystemClock();
  auto fail_input = [&](const Status& s) {
    std::fprintf(err, "stormark: %s\n", std::string(s.message()).c_str());
    return kExitBadInput;
  };

  // 1. The plan, validated completely before anything starts.
  Plan plan = DefaultPlan();
  if (!options.plan_path.empty()) {
    auto loaded = LoadPlan(options.plan_path);
    if (!loaded.ok()) return fail_input(loaded.status());
    plan = std::move(*loaded);
  }
  if (Status s = ApplyFlags(options, &plan); !s.ok()) return fail_input(s);
  for (const std::string& note : plan.notes) {
    std::fprintf(err, "stormark: note: %s\n", note.c_str());
  }
  if (options.mode) {
    auto mode = ParseRunMode(*options.mode);
    if (!mode.ok()) return fail_input(mode.status());
    plan.mode = *mode;
  }
  auto fleet_options = MakeFleetOptions(options, &plan);
  if (!fleet_options.ok()) return fail_input(fleet_options.status());
  if (!options.agents.empty() || !options.agents_dns.empty() || !options.inventory.empty()) {
    plan.hosts.clear();
    plan.agents_dns = options.agents_dns;
    plan.inventory = options.inventory;
    for (const std::string& address : options.agents) plan.hosts.push_back({address, address, {}, "", ""});
  }
  auto gathered = GatherHosts(std::move(plan.hosts), plan.agents_dns, plan.inventory);
  if (!gathered.ok()) return fail_input(gathered.status());
  plan.hosts = std::move(*gathered);
  const bool embedded = plan.hosts.empty();
  auto tls = LoadControllerTls(options.tls, plan.tls);
  if (!tls.ok()) return fail_input(tls.status());
  if (tls->has_value() && !(*tls)->warning.empty()) {
    std::fprintf(err, "stormark: warning: %s\n", (*tls)->warning.c_str());
  }
  if (embedded && tls->has_value()) {
    return fail_input(absl::InvalidArgumentError(
        "TLS files were given but no agents (--agent or a plan's hosts); the embedded local "
        "agent talks plain text over a private unix socket"));
  }
  std::vector<std::unique_ptr<AgentClient>> clients;
  for (const HostPlan& host : plan.hosts) {
    const AgentSecurity security{tls->has_value() ? &**tls : nullptr, host.tls_name};
    auto client = AgentClient::ForAddress(host.address, clock, host.name, security);
    if (!client.ok()) return fail_input(common::Annotate(client.status(), StrCat("host '", host.name, "'")));
    (*client)->set_default_target(host.target);
    clients.push_back(std::move(*client));
  }
  if (!embedded && !options.dir.empty()) {
    return fail_input(absl::InvalidArgumentError(
        "--dir is for the embedded local agent; with --agent, targets are named by the agents' "
        "configs (use --target)"));
  }
  // A --dir that is not a directory is bad input, found before anything starts.
  if (!options.dir.empty()) {
    struct stat st;
    if (stat(options.dir.c_str(), &st) != 0) {
      return fail_input(common::ErrnoError(StrCat("--dir ", options.dir), errno));
    }
    if (!S_ISDIR(st.st_mode)) {
      return fail_input(
          absl::InvalidArgumentError(StrCat("--dir ", options.dir, ": not a directory")));
    }
  }

  if (!options.baseline.empty()) {
    bool known = embedded && options.baseline == "local";
    for (const auto& client : clients) known = known || client->host() == options.baseline;
    if (!known) {
      return fail_input(absl::InvalidArgumentError(StrCat(
          "--baseline ", options.baseline, ": not one of the run's hosts (",
          embedded ? "the embedded agent is 'local'" : "name it as the plan or --agent does", ")")));
    }
  }
  // The results database, before anything runs: one that cannot be opened is bad input.
  std::unique_ptr<ResultsStore> store;
  if (!options.no_db) {
    auto opened =
        ResultsStore::Open(options.db_path.empty() ? DefaultResultsPath() : options.db_path);
    if (!opened.ok()) return fail_input(common::Annotate(opened.status(), "results database"));
    store = std::move(*opened);
  }
  RunJournal journal(std::move(store), err);

  // 2. The agents: the given ones, or one we start ourselves.
  std::unique_ptr<LocalAgent> local;
  if (embedded) {
    auto started = LocalAgent::Start(options.agent_binary, options.dir);
    if (!started.ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(started.status().message()).c_str());
      return kExitSomeFailed;
    }
    local = std::move(*started);
    clients.push_back(std::make_unique<AgentClient>(
        "local", AgentClient::MakeChannel(local->address()), clock));
  }

  RunRecord run;
  run.started_unix_nanos = clock.NowUnixNanos();
  run.run_id = NewRunId(run.started_unix_nanos);
  Fleet fleet(std::move(clients), clock, *fleet_options);
  // Ctrl-C aborts the phase on every agent. The guard removes the handler on every way out,
  // before `fleet` is destroyed; an interrupt that came before this point counts too.
  interrupts.SetHandler([&fleet] { fleet.AbortAll(); });
  struct HandlerGuard {
    Interrupts& interrupts;
    ~HandlerGuard() { interrupts.SetHandler(nullptr); }
  } handler_guard{interrupts};
  if (interrupts.interrupted()) fleet.AbortAll();

  std::fprintf(out, "stormark %s  run %s  %zu agent%s%s\n",
               std::string(common::kSoftwareVersion).c_str(), run.run_id.c_str(), fleet.size(),
               fleet.size() == 1 ? "" : "s",
               local ? StrCat(" (embedded, on ", local->data_dir(), ")").c_str() : "");
  const std::vector<Status> connected = fleet.ConnectAll();
  size_t usable = 0;
  for (size_t i = 0; i < fleet.size(); ++i) {
    AgentRecord record;
    record.host = fleet.client(i).host();
    record.error = fleet.host_error(i);
    record.info = fleet.client(i).info();
    record.clock = fleet.client(i).clock();
    if (i < plan.hosts.size()) record.labels = plan.hosts[i].labels;
    run.agents.push_back(std::move(record));
    if (connected[i].ok()) ++usable;
  }
  std::fputs(FormatAgentsTable(run.agents).c_str(), out);
  if (const std::string notes = FormatEnvironmentNotes(run.agents); !notes.empty()) {
    std::fprintf(out, "\n%s", notes.c_str());
  }
  journal.Begin(run, {RunLabel(options, plan), plan.mode,
                     SweepPoints(plan).size() * plan.repeat * plan.phases.size(),
                     RunOwner::Self()});
  for (size_t i = 0; i < fleet.size(); ++i) {
    if (!connected[i].ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(connected[i].message()).c_str());
    }
  }
  std::fputs("\n", out);
  std::fflush(out);

  // Every phase's target and workload must exist on every reachable host before anything runs.
  bool targets_ok = true;
  for (size_t i = 0; i < fleet.size(); ++i) {
    if (!connected[i].ok()) continue;
    for (const PhasePlan& phase : plan.phases) {
      Status usable_here = fleet.client(i).ResolveTarget(phase.target).status();
      if (usable_here.ok()) {
        usable_here = fleet.client(i).CheckWorkload(std::string(common::WorkloadName(phase.spec)));
      }
      if (!usable_here.ok()) {
        std::fprintf(err, "stormark: %s\n", std::string(usable_here.message()).c_str());
        targets_ok = false;
        break;
      }
    }
  }
  if (!targets_ok) {
    journal.Finish(run.run_id, clock.NowUnixNanos(), kRunFailed);
    return kExitBadInput;
  }

  // 3. For each sweep point: the setup hooks, the phases `repeat` times, the teardown
  // hooks. Each phase runs on every usable host at once (or one after another).
  bool any_failed = usable < fleet.size();
  const bool show_progress = options.progress.value_or(isatty(fileno(out)) == 1);
  LiveProgress live(out, show_progress, fleet.size(), clock);
  const std::vector<SweepPoint> points = SweepPoints(plan);
  const size_t total = points.size() * plan.repeat * plan.phases.size();
  size_t done = 0, ids = 0;
  auto next_id = [&] { return StrCat(run.run_id, "-", ++ids); };
  for (size_t pt = 0; usable > 0 && pt < points.size() && !fleet.halted(); ++pt) {
    const SweepPoint& point = points[pt];
    if (!point.empty()) {
      std::fprintf(out, "Sweep point %zu/%zu: %s\n\n", pt + 1, points.size(),
                   DescribeSweepPoint(point).c_str());
    }
    const bool set_up = RunHooks(fleet, plan.setup, point, "setup", next_id, out);
    if (!set_up) {
      any_failed = true;
      std::fprintf(out, "  the phases of this point are skipped: its setup failed\n\n");
    }
    for (int rep = 0; set_up && rep < plan.repeat && !fleet.halted(); ++rep) {
      // Valid: the plan was checked at every point before anything ran.
      std::vector<PhasePlan> phases = *PhasesAt(plan, point, rep);
      for (const PhasePlan& phase : phases) {
        if (fleet.halted()) break;
        live.Begin(phase.name, KindOf(phase.spec)->expected_bytes(phase.spec) *
                                   (plan.mode == RunMode::kSequential ? 1 : usable));
        PhaseOutcome outcome = fleet.RunPhase(
            phase, next_id(),
            [&live](size_t host, const stormark::v1::RunUpdate::Progress& progress) {
              live.Update(host, progress);
            },
            plan.mode);
        live.End();
        LabelTransports(run.agents, &outcome);
        journal.Phase(run.run_id, done, outcome);
        const PhaseSummary summary = Summarize(outcome);
        std::fputs(FormatPhaseTable(outcome, summary, done++, total, plan.repeat).c_str(), out);
        std::fputs("\n", out);
        std::fflush(out);
        if (summary.failed > 0) any_failed = true;
        run.phases.push_back(std::move(outcome));
      }
    }
    if (!RunHooks(fleet, plan.teardown, point, "teardown", next_id, out)) any_failed = true;
  }
  const std::string summary = SweepSummaryTable(run.phases, plan.repeat);
  if (!summary.empty()) std::fprintf(out, "%s\n", summary.c_str());
  run.finished_unix_nanos = clock.NowUnixNanos();
  run.interrupted = fleet.aborted();
  if (const std::string stopped = fleet.stopped(); !stopped.empty() && !run.interrupted) {
    std::fprintf(err, "stormark: %s\n", stopped.c_str());
    any_failed = true;
  }

  // 4. The record, whatever happened: partial results are results.
  int code = run.interrupted ? kExitInterrupted : any_failed ? kExitSomeFailed : kExitOk;
  journal.Finish(run.run_id, run.finished_unix_nanos, EndStatus(code));
  if (!options.baseline.empty() && !run.phases.empty()) {
    auto table = FormatBaselineTables(run, options.baseline);
    std::fputs(table.ok() ? table->c_str() : "", out);
  }
  if (!options.json_path.empty()) {
    Status written = WriteJsonReport(run, options.json_path);
    if (!written.ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(written.message()).c_str());
      if (code == kExitOk) code = kExitSomeFailed;
    } else {
      std::fprintf(out, "JSON report: %s\n", options.json_path.c_str());
    }
  }
  if (!options.csv_path.empty()) {
    Status written = WriteBonnieCsv(run, options.csv_path);
    if (!written.ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(written.message()).c_str());
      if (code == kExitOk) code = kExitSomeFailed;
    } else {
      std::fprintf(out, "bonnie++ CSV: %s\n", options.csv_path.c_str());
    }
  }
  if (journal.healthy()) {
    std::fprintf(out, "Results: %s (stormark results show %s)\n", journal.path().c_str(),
                 run.run_id.c_str());
  } else if (!options.no_db && code == kExitOk) {
    code = kExitSomeFailed;
  }
  if (usable == 0) std::fprintf(err, "stormark: no agent could be reached; nothing ran\n");
  return code;
}

}  // namespace stormark::controller
