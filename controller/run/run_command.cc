#include "controller/run/run_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <memory>
#include <random>

#include "common/clock.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/version.h"
#include "controller/fio/fio_hosts.h"
#include "controller/fleet/agent_client.h"
#include "controller/fleet/discovery.h"
#include "controller/workloads/workload_kinds.h"
#include "controller/report/environment.h"
#include "controller/fleet/fleet.h"
#include "controller/run/full_phase.h"
#include "controller/run/live_progress.h"
#include "controller/fleet/local_agent.h"
#include "controller/fleet/thread_budget.h"
#include "controller/plan/plan.h"
#include "controller/report/report_table.h"
#include "controller/report/run_status.h"
#include "controller/results/results_query.h"
#include "controller/results/results_store.h"
#include "controller/results/run_journal.h"
#include "controller/run/run_hooks.h"
#include "controller/run/run_outputs.h"
#include "controller/run/run_record.h"
#include "controller/report/summary.h"
#include "controller/report/sweep_table.h"
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

// The stored end status of a run (results_store.h).
const char* StoredStatus(const RunStatus& status) {
  if (status.status == "complete") return kRunCompleted;
  if (status.status == "partial") return kRunPartial;
  return status.status == "interrupted" ? kRunInterrupted : kRunFailed;
}

}  // namespace

int RunCommand(const RunOptions& options, Interrupts& interrupts, std::FILE* out, std::FILE* err) {
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
    for (const std::string& address : options.agents)
      plan.hosts.push_back({address, address, {}, "", ""});
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
    if (!client.ok())
      return fail_input(common::Annotate(client.status(), StrCat("host '", host.name, "'")));
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

  // A controller that may not start the few threads it needs: said now, with the limit named,
  // rather than as agents that time out.
  if (Status s = CheckThreadBudget(SystemThreadLimits()); !s.ok()) {
    return fail_input(s);
  }
  if (!options.group_by.empty()) {
    if (Status s = CheckGroupBy(options.group_by); !s.ok()) return fail_input(s);
  }
  if (!options.baseline.empty()) {
    bool known = embedded && options.baseline == "local";
    for (const auto& client : clients) known = known || client->host() == options.baseline;
    if (!known) {
      return fail_input(absl::InvalidArgumentError(
          StrCat("--baseline ", options.baseline, ": not one of the run's hosts (",
                 embedded ? "the embedded agent is 'local'" : "name it as the plan or --agent does",
                 ")")));
    }
  }
  // The results database, before anything runs: one that cannot be opened is bad input.
  std::unique_ptr<ResultsStore> store;
  if (!options.no_db) {
    auto opened = ResultsStore::Open(
        options.db_path.empty() ? DefaultResultsPath() : options.db_path, SchemaNoteTo(err));
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
    clients.push_back(
        std::make_unique<AgentClient>("local", AgentClient::MakeChannel(local->address()), clock));
  }

  RunRecord run;
  run.started_unix_nanos = clock.NowUnixNanos();
  run.run_id = NewRunId(run.started_unix_nanos);
  run.read_back = [&journal, &run](size_t index, std::vector<std::string>* packed_series) {
    return journal.ReadBack(run.run_id, index, run.agents.size(), packed_series);
  };
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
  const TableView view = MakeTableView(options.all_hosts, options.group_by, run.agents);
  std::fputs(FormatAgentsTable(run.agents, view).c_str(), out);
  if (const std::string notes =
          FormatEnvironmentNotes(run.agents, Collapses(view, run.agents.size()));
      !notes.empty()) {
    std::fprintf(out, "\n%s", notes.c_str());
  }
  // A fio job file that differs by host: each host's own values, now that every host and its
  // target are known.
  {
    auto lookup = [&](size_t i, const std::string& wanted) -> const stormark::v1::TargetInfo* {
      if (i >= fleet.size() || !connected[i].ok()) return nullptr;
      auto name = fleet.client(i).ResolveTarget(wanted);
      for (const auto& t : fleet.client(i).info().targets()) {
        if (name.ok() && t.name() == *name) return &t;
      }
      // No such target: its facts read as unknown, and the target check below says why.
      return &stormark::v1::TargetInfo::default_instance();
    };
    if (Status s = fio::ResolveHostSpecs(&plan, lookup); !s.ok()) return fail_input(s);
  }
  journal.Begin(run,
                {RunLabel(options, plan), plan.mode,
                 SweepPoints(plan).size() * plan.repeat * plan.phases.size(), RunOwner::Self()});
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
      const auto own_target = phase.host_targets.find(i);
      Status usable_here =
          fleet.client(i)
              .ResolveTarget(own_target != phase.host_targets.end() ? own_target->second
                                                                    : phase.target)
              .status();
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
    journal.Finish(run, clock.NowUnixNanos(), kRunFailed);
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
    const bool set_up = RunHooks(fleet, plan.setup, point, "setup", next_id, out, &run);
    if (!set_up) {
      any_failed = true;
      run.skipped_points.push_back({run.phases.size(), DescribeSweepPoint(point)});
      std::fputs(FormatSkippedPoint(run.skipped_points.back()).c_str(), out);
    }
    journal.Events(run);  // Recorded now: a crash later keeps them.
    for (int rep = 0; set_up && rep < plan.repeat && !fleet.halted(); ++rep) {
      // Valid: the plan was checked at every point before anything ran.
      std::vector<PhasePlan> phases = *PhasesAt(plan, point, rep);
      for (size_t k = 0; k < phases.size(); ++k) {
        if (fleet.halted()) break;
        PhasePlan& phase = phases[k];
        // The next phase reads what this one writes: ask the agents to keep its file for it
        // (its id is the next one given out).
        const WorkloadKind* kind = KindOf(phase.spec);
        if (k + 1 < phases.size() && phases[k + 1].target == phase.target &&
            kind->reads_back != nullptr && kind->reads_back(phase.spec, phases[k + 1].spec)) {
          phase.spec.set_hand_over_to(StrCat(run.run_id, "-", ids + 2));
        }
        live.Begin(phase.name, kind->expected_bytes(phase.spec) *
                                   (plan.mode == RunMode::kSequential ? 1 : usable));
        PhaseOutcome begun;
        begun.plan = phase;
        begun.plan.spec.clear_hand_over_to();  // Not part of the work: the record omits it.
        begun.phase_id = next_id();
        begun.mode = plan.mode;
        journal.BeginPhase(run.run_id, done, begun, fleet.size());
        PhaseOutcome outcome = fleet.RunPhase(
            phase, begun.phase_id,
            [&live](size_t host, const stormark::v1::RunUpdate::Progress& progress) {
              live.Update(host, progress);
            },
            plan.mode, journal.host_done());
        live.End();
        outcome.plan.spec.clear_hand_over_to();
        LabelTransports(run.agents, &outcome);
        journal.EndPhase(run.run_id, done, &outcome);
        if (const common::Status share = journal.ShareWindow(run.run_id, done, &outcome);
            !share.ok()) {
          std::fprintf(err,
                       "stormark: phase %zu '%s': the window in which all hosts ran is estimated "
                       "pro rata: reading the hosts' series back: %s\n",
                       done + 1, outcome.plan.name.c_str(), std::string(share.message()).c_str());
          any_failed = true;
        }
        const PhaseSummary summary = Summarize(outcome);
        std::fputs(FormatPhaseTable(outcome, summary, done++, total, plan.repeat, view).c_str(),
                   out);
        std::fputs("\n", out);
        std::fflush(out);
        if (summary.failed > 0) any_failed = true;
        run.phases.push_back(std::move(outcome));
        // Held whole only until the database has it: the outputs at the end read it back.
        if (journal.healthy()) CutPhaseToSummaries(&run, run.phases.size() - 1);
      }
    }
    if (!RunHooks(fleet, plan.teardown, point, "teardown", next_id, out, &run,
                  /*teardown=*/true)) {
      any_failed = true;
    }
    journal.Events(run);
  }
  const std::string summary = SweepSummaryTable(run, plan.repeat);
  if (!summary.empty()) std::fprintf(out, "%s\n", summary.c_str());
  run.finished_unix_nanos = clock.NowUnixNanos();
  run.interrupted = fleet.aborted();
  if (const std::string stopped = fleet.stopped(); !stopped.empty() && !run.interrupted) {
    std::fprintf(err, "stormark: %s\n", stopped.c_str());
    run.stopped = stopped;
    any_failed = true;
  }
  // The run as a whole, in the words every view uses (report/run_status.h).
  const RunStatus status = StatusOf(run);
  if (status.status != "complete") std::fprintf(out, "%s\n", FormatRunStatus(status).c_str());

  // 4. The record, whatever happened: partial results are results.
  int code = run.interrupted ? kExitInterrupted : any_failed ? kExitSomeFailed : kExitOk;
  journal.Finish(run, run.finished_unix_nanos, StoredStatus(status));
  code = WriteRunOutputs(options, run, journal, code, out, err);
  if (usable == 0) std::fprintf(err, "stormark: no agent could be reached; nothing ran\n");
  return code;
}

}  // namespace stormark::controller
