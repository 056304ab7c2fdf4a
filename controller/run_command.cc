#include "controller/run_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <random>

#include "common/clock.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/version.h"
#include "controller/agent_client.h"
#include "controller/workloads/bonnie_report.h"
#include "controller/workloads/stream_params.h"
#include "controller/workloads/workload_kinds.h"
#include "controller/fleet.h"
#include "controller/live_progress.h"
#include "controller/local_agent.h"
#include "controller/plan.h"
#include "controller/report_baseline.h"
#include "controller/report_json.h"
#include "controller/report_table.h"
#include "controller/results/results_store.h"
#include "controller/results/run_journal.h"
#include "controller/run_record.h"
#include "controller/summary.h"
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

// Applies the workload flags to the plan. Fails on a flag that cannot apply.
Status ApplyFlags(const RunOptions& options, Plan* plan) {
  std::vector<std::pair<std::string, std::string>> params;
  if (options.size) params.emplace_back("size", *options.size);
  if (options.bs) params.emplace_back("bs", *options.bs);
  if (options.direct) params.emplace_back("direct", *options.direct ? "true" : "false");
  if (options.fdatasync) params.emplace_back("fdatasync", *options.fdatasync ? "true" : "false");

  for (const std::string& assignment : options.sets) {
    const size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          StrCat("--set '", assignment, "': expected KEY=VALUE, such as --set files=16:0:0:1"));
    }
    params.emplace_back(assignment.substr(0, eq), assignment.substr(eq + 1));
  }
  if (!options.plan_path.empty() && options.workload) {
    return absl::InvalidArgumentError(
        "--workload cannot be combined with --plan: the plan's phases name their workloads");
  }
  if (options.workload && *options.workload != "stream") {
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
  for (PhasePlan& phase : plan->phases) {
    for (const auto& [key, value] : params) {
      Status s = SetWorkloadParameter(key, value, &phase.spec);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            StrCat("phase '", phase.name, "': ", key, "=", value, ": ", s.message()));
      }
    }
    if (options.target) phase.target = *options.target;
    if (options.cache) {
      ASSIGN_OR_RETURN(stormark::v1::CacheMode mode, ParseCacheMode(*options.cache));
      phase.spec.set_cache(mode);
    }
    RETURN_IF_ERROR(common::Annotate(ValidatePhase(phase), StrCat("phase '", phase.name, "'")));
  }
  return absl::OkStatus();
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
  std::string text;
  for (const PhaseOutcome& phase : run.phases) {
    if (!phase.plan.spec.has_bonnie()) continue;
    for (const HostOutcome& host : phase.hosts) {
      if (host.succeeded()) text += BonnieCsvLine(host.host, *host.result) + "\n";
    }
  }
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return common::ErrnoError(StrCat("--csv ", path), errno);
  const bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  if (std::fclose(file) != 0 || !ok) return common::ErrnoError(StrCat("--csv ", path), errno);
  return absl::OkStatus();
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
  if (options.mode) {
    auto mode = ParseRunMode(*options.mode);
    if (!mode.ok()) return fail_input(mode.status());
    plan.mode = *mode;
  }
  const std::vector<std::string>& addresses = options.agents.empty() ? plan.agents : options.agents;
  std::vector<std::unique_ptr<AgentClient>> clients;
  for (const auto& address : addresses) {
    auto client = AgentClient::ForAddress(address, clock);
    if (!client.ok()) return fail_input(client.status());
    clients.push_back(std::move(*client));
  }
  if (!addresses.empty() && !options.dir.empty()) {
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
    bool known = addresses.empty() && options.baseline == "local";
    for (const auto& client : clients) known = known || client->host() == options.baseline;
    if (!known) {
      return fail_input(absl::InvalidArgumentError(StrCat(
          "--baseline ", options.baseline, ": not one of the run's hosts (",
          addresses.empty() ? "the embedded agent is 'local'" : "name it as --agent does", ")")));
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
  if (addresses.empty()) {
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
  Fleet fleet(std::move(clients), clock);
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
    run.agents.push_back(std::move(record));
    if (connected[i].ok()) ++usable;
  }
  std::fputs(FormatAgentsTable(run.agents).c_str(), out);
  journal.Begin(run, {RunLabel(options, plan), plan.mode, plan.phases.size(), RunOwner::Self()});
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

  // 3. The phases, one after another, each on every usable host at once.
  bool any_failed = usable < fleet.size();
  const bool show_progress = options.progress.value_or(isatty(fileno(out)) == 1);
  LiveProgress live(out, show_progress, fleet.size(), clock);
  if (usable > 0) {
    for (size_t p = 0; p < plan.phases.size() && !fleet.aborted(); ++p) {
      const PhasePlan& phase = plan.phases[p];
      const std::string phase_id = StrCat(run.run_id, "-", p + 1);
      live.Begin(phase.name, KindOf(phase.spec)->expected_bytes(phase.spec) *
                                 (plan.mode == RunMode::kSequential ? 1 : usable));
      PhaseOutcome outcome = fleet.RunPhase(
          phase, phase_id,
          [&live](size_t host, const stormark::v1::RunUpdate::Progress& progress) {
            live.Update(host, progress);
          },
          plan.mode);
      live.End();
      journal.Phase(run.run_id, p, outcome);
      const PhaseSummary summary = Summarize(outcome);
      std::fputs(FormatPhaseTable(outcome, summary, p, plan.phases.size()).c_str(), out);
      std::fputs("\n", out);
      std::fflush(out);
      if (summary.failed > 0) any_failed = true;
      run.phases.push_back(std::move(outcome));
    }
  }
  run.finished_unix_nanos = clock.NowUnixNanos();
  run.interrupted = fleet.aborted();

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
