// stormark: the controller. Runs the same storage workload on many agents at one instant
// and prints the comparison.
#include <sys/resource.h>

#include <cstdio>
#include <iostream>
#include <tuple>

#include "absl/synchronization/mutex.h"
#include "CLI/CLI.hpp"
#include "common/text_file.h"
#include "common/version.h"
#include "controller/fleet/agents_command.h"
#include "controller/certs/certs_command.h"
#include "controller/fio/fio_command.h"
#include "controller/fio/job_file.h"
#include "controller/fleet/discovery.h"
#include "controller/run/interrupts.h"
#include "controller/fleet/local_agent.h"
#include "controller/results/export_command.h"
#include "controller/results/report_command.h"
#include "controller/results/results_command.h"
#include "controller/run/run_command.h"
#include "controller/workloads/help_command.h"
#include "controller/workloads/workload_kinds.h"

namespace {

using stormark::controller::RunOptions;

// Each agent takes a connection (and gRPC a few descriptors more): lift the soft limit on open
// files to the hard one, so that hundreds of agents fit under a default soft limit of 1024.
void RaiseOpenFileLimit() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int Main(int argc, char** argv) {
  RaiseOpenFileLimit();
  // Lives until exit: its signal thread is detached and uses it.
  auto* interrupts = new stormark::controller::Interrupts();

  CLI::App app{"stormark: runs the same storage benchmark on many hosts at one instant"};
  app.require_subcommand(1);
  app.set_version_flag("--version", stormark::common::VersionText("stormark"));

  RunOptions run;
  run.agent_binary = stormark::controller::LocalAgent::DefaultBinary();
  CLI::App* run_cmd = app.add_subcommand(
      "run", "run a plan (default: write then read 1 GiB) on the agents, or on a local one");
  run_cmd->add_option("--agent", run.agents,
                      "agent HOST:PORT or unix:/path, repeatable (default: start a local "
                      "agent on a temporary directory)");
  run_cmd->add_option("--plan", run.plan_path, "YAML plan file")->check(CLI::ExistingFile);
  std::string rw, size, bs, target;
  bool direct = false, no_direct = false, fdatasync = false, no_fdatasync = false;
  auto* rw_opt = run_cmd->add_option(
      "--rw", rw,
      "write or read (one stream phase); with --workload randio, its pattern: randread, "
      "randwrite, randrw, read, write, rw");
  auto* size_opt = run_cmd->add_option("--size", size, "bytes per host, e.g. 512M, 4G");
  auto* bs_opt = run_cmd->add_option("--bs", bs, "block size per call, e.g. 4k, 1M");
  auto* target_opt = run_cmd->add_option("--target", target, "agent target name");
  // Each flag and its negation apart, so that --help says what each does and which is the
  // default (CLI11 prints a "!--no-x" pair as "--x,--no-x{false}").
  auto* direct_opt =
      run_cmd->add_flag("--direct", direct, "O_DIRECT: bypass the page cache (default: off)");
  auto* no_direct_opt = run_cmd->add_flag("--no-direct", no_direct, "buffered I/O (the default)");
  auto* sync_opt = run_cmd->add_flag("--fdatasync", fdatasync,
                                     "fdatasync inside the timed region (the default for writes)");
  auto* no_sync_opt = run_cmd->add_flag("--no-fdatasync", no_fdatasync,
                                        "no fdatasync: a write is timed into the page cache");
  std::string workload, mode;
  auto* workload_opt =
      run_cmd->add_option("--workload", workload,
                          "without --plan: one phase of this workload (" +
                              stormark::controller::WorkloadNames() + "; default stream)");
  run_cmd
      ->add_option("--postmark-config", run.postmark_config,
                   "a PostMark script (set number 2000, run, ...): its runs are the phases")
      ->check(CLI::ExistingFile);
  run_cmd
      ->add_option("--fio", run.fio_path,
                   "a fio job file: its jobs run on every host at once, one phase per run "
                   "group (stormark fio --check FILE shows them)")
      ->check(CLI::ExistingFile);
  run_cmd->add_option("--section", run.fio_sections,
                      "with --fio: run only this job (fio's --section), repeatable");
  run_cmd->add_option("--set", run.sets,
                      "KEY=VALUE workload parameter for every phase, repeatable "
                      "(e.g. --set files=16:0:0:1; stormark help workload NAME lists them)");
  auto* mode_opt =
      run_cmd->add_option("--mode", mode, "concurrent (all hosts at once) or sequential")
          ->check(CLI::IsMember({"concurrent", "sequential"}));
  std::string cache;
  auto* cache_opt =
      run_cmd
          ->add_option("--cache", cache,
                       "before each timed region: keep, sync, or drop (sync, then drop the "
                       "page cache; needs root on the agent)")
          ->check(CLI::IsMember({"keep", "sync", "drop"}));
  run_cmd->add_option("--json", run.json_path, "write the full report as JSON to FILE");
  run_cmd->add_option("--fio-json", run.fio_json_path,
                      "write the run in fio's --output-format=json layout to FILE, a job per "
                      "phase and host and an All clients entry per phase");
  run_cmd->add_option("--fio-json-plus", run.fio_json_plus_path,
                      "the same with the latency bins of fio's json+ (fio_jsonplus_clat2csv)");
  auto* db_opt =
      run_cmd->add_option("--db", run.db_path,
                          "results database (default: $XDG_DATA_HOME/stormark/results.db or "
                          "~/.local/share/stormark/results.db)");
  run_cmd->add_flag("--no-db", run.no_db, "do not record the run in the results database")
      ->excludes(db_opt);
  run_cmd->add_option("--label", run.label,
                      "name of the run in 'stormark results list' (default: the plan file)");
  run_cmd->add_option("--baseline", run.baseline,
                      "after the phases, compare every host with this one (ratios)");
  run_cmd->add_option("--csv", run.csv_path,
                      "write bonnie++ CSV lines (bonnie phases) to FILE, for bon_csv2html");
  run_cmd->add_option("--dir", run.dir,
                      "directory for the embedded local agent (default: a new one under "
                      "$TMPDIR or /var/tmp)");
  run_cmd->add_flag("--fail-fast", run.fail_fast,
                    "stop the run at the first host failure (abort the phase on the others, "
                    "keep the results so far, exit 1)");
  std::string heartbeat_interval, heartbeat_timeout, deadline, prepare_deadline;
  auto* hb_interval_opt = run_cmd->add_option(
      "--heartbeat-interval", heartbeat_interval,
      "how often each agent is asked whether it is alive (default 2s, or the plan's)");
  auto* hb_timeout_opt = run_cmd->add_option(
      "--heartbeat-timeout", heartbeat_timeout,
      "a host silent this long is failed and its agent drops the phase (default 10s)");
  auto* deadline_opt = run_cmd->add_option(
      "--deadline", deadline,
      "abort a phase still running this long after its start on a host (default: none for "
      "size-bound phases beyond 4x their own rate, 2x the runtime + 60s for timed ones)");
  auto* prepare_deadline_opt = run_cmd->add_option(
      "--prepare-deadline", prepare_deadline,
      "fail a phase on a host whose set-up (Prepare) has not finished this long after it "
      "began (default 5 min + 1 s per 16 MiB of the phase's size)");
  bool progress = false, no_progress = false;
  auto* progress_opt = run_cmd->add_flag("--progress", progress,
                                         "live progress line (default: when stdout is a tty)");
  auto* no_progress_opt =
      run_cmd->add_flag("--no-progress", no_progress, "no progress line, even on a tty");

  std::vector<std::string> inventory;
  CLI::App* agents_cmd = app.add_subcommand("agents", "print the facts of each agent");
  agents_cmd->add_option("--agent", inventory, "agent HOST:PORT or unix:/path, repeatable");
  std::string agents_dns, agents_inventory;
  for (auto [cmd, dns, file] : {std::tuple{run_cmd, &run.agents_dns, &run.inventory},
                                std::tuple{agents_cmd, &agents_dns, &agents_inventory}}) {
    cmd->add_option("--agents-dns", *dns,
                    "NAME:PORT: an agent at every address NAME resolves to (a Kubernetes "
                    "headless Service)");
    cmd->add_option("--inventory", *file,
                    "Ansible inventory (INI or YAML): its stormark_agents group, else every host")
        ->check(CLI::ExistingFile);
  }
  stormark::common::TlsFiles agents_tls;
  std::string run_tls_dir, agents_tls_dir;
  for (auto [cmd, files, dir] : {std::tuple{run_cmd, &run.tls, &run_tls_dir},
                                 std::tuple{agents_cmd, &agents_tls, &agents_tls_dir}}) {
    cmd->add_option("--tls-dir", *dir,
                    "mutual TLS with DIR/ca.crt, DIR/controller.crt and DIR/controller.key "
                    "(stormark certs)");
    cmd->add_option("--tls-ca", files->ca, "CA certificate the agents' certificates are signed by");
    cmd->add_option("--tls-cert", files->cert, "this controller's certificate");
    cmd->add_option("--tls-key", files->key, "this controller's private key");
  }

  stormark::controller::CertsOptions certs;
  CLI::App* certs_cmd =
      app.add_subcommand("certs", "the fleet's private CA and the certificates it signs (mTLS)");
  certs_cmd->require_subcommand(1);
  CLI::App* certs_init = certs_cmd->add_subcommand("init", "create a CA: DIR/ca.crt, DIR/ca.key");
  CLI::App* certs_issue = certs_cmd->add_subcommand(
      "issue", "sign a key pair for an agent (--agent NAME) or a controller (--controller)");
  certs_issue->add_option("--agent", certs.agent,
                          "the agent's host name: its certificate's CN and first subjectAltName");
  certs_issue
      ->add_option("--controller", certs.controller, "a controller (default name: controller)")
      ->expected(0, 1);
  certs_issue->add_option("--ip", certs.ips, "also valid for this IP address, repeatable");
  certs_issue->add_option("--dns", certs.dns, "also valid for this DNS name, repeatable");
  for (CLI::App* sub : {certs_init, certs_issue}) {
    sub->add_option("--dir", certs.dir,
                    "where the CA lives (default: $XDG_CONFIG_HOME/stormark/pki or "
                    "~/.config/stormark/pki)");
    sub->add_option("--key-type", certs.key_type, "ec (P-256, default) or rsa (2048 bits)")
        ->check(CLI::IsMember({"ec", "rsa"}));
    sub->add_option("--days", certs.days, "validity in days (default 825)")
        ->check(CLI::Range(1, 36500));
  }

  stormark::controller::ResultsOptions results;
  std::vector<std::string> run_refs;
  CLI::App* results_cmd = app.add_subcommand(
      "results", "the results history: list, show, compare or export recorded runs");
  results_cmd->require_subcommand(1);
  results_cmd->add_option("--db", results.db_path, "results database (default: as for run)");
  CLI::App* list_cmd = results_cmd->add_subcommand("list", "every recorded run, newest first");
  CLI::App* show_cmd =
      results_cmd->add_subcommand("show", "the tables of a recorded run, printed again");
  show_cmd->add_option("RUN", run_refs, "run id, a unique prefix of one, or 'latest'")
      ->required()
      ->expected(1);
  show_cmd->add_option("--baseline", results.baseline,
                       "also compare every host with this one (ratios)");
  for (auto [cmd, all, by] : {std::tuple{run_cmd, &run.all_hosts, &run.group_by},
                              std::tuple{show_cmd, &results.all_hosts, &results.group_by}}) {
    cmd->add_flag("--all-hosts", *all,
                  "a table row per host, however many (past 32 hosts the tables show groups)");
    cmd->add_option("--group-by", *by,
                    "how a table of more than 32 hosts groups them: via (how the storage is "
                    "reached, and the target; the default), target, or label:KEY");
  }
  CLI::App* compare_cmd = results_cmd->add_subcommand(
      "compare",
      "two runs side by side: each figure in A and B, the ratio, and the noise; with "
      "--fail-if-slower, a regression gate for CI (exit 0 pass, 1 regression, 2 error)");
  stormark::controller::CompareOptions compare;
  std::vector<std::string> compare_refs;
  compare_cmd
      ->add_option("RUNS", compare_refs,
                   "RUN_A RUN_B (run ids, unique prefixes, or 'latest'); with --baseline, the "
                   "run to judge (default: latest)")
      ->expected(0, 2);
  compare_cmd->add_option("--baseline", compare.baseline,
                          "the run to judge against: a run id, or 'latest-same-plan' (the "
                          "latest earlier completed run with the same label and plan)");
  auto* gate_opt = compare_cmd->add_option(
      "--fail-if-slower", compare.fail_if_slower,
      "exit 1 when a figure is slower than the baseline by more than this (e.g. 10%) and "
      "beyond the noise");
  compare_cmd
      ->add_option("--metric", compare.metrics,
                   "a metric the gate checks, repeatable (default: MiB/s, ops/s, p50 lat, "
                   "p99 lat, elapsed)")
      ->needs(gate_opt);
  compare_cmd->add_flag("--all-hosts", compare.all_hosts,
                        "a row per host and every failed check, however many (past 32 hosts the "
                        "table holds the all-hosts rows and the hosts that changed)");
  compare_cmd->add_option("--junit", compare.junit, "write the gate's checks as JUnit XML")
      ->needs(gate_opt);
  compare_cmd
      ->add_option("--markdown", compare.markdown,
                   "write the gate's outcome as a Markdown summary (for pull requests)")
      ->needs(gate_opt);
  stormark::controller::ExportOptions export_options;
  std::string export_run;
  CLI::App* export_cmd = results_cmd->add_subcommand(
      "export",
      "a recorded run as JSON, CSV, bonnie++ CSV, Prometheus text (or pushed) or fio's JSON");
  export_cmd->add_option("RUN", export_run, "run id, a unique prefix of one, or 'latest'")
      ->required();
  export_cmd
      ->add_option("--format", export_options.format,
                   "json (schema stormark.run/1), csv (a row per host, phase and metric), "
                   "bonnie-csv (for bon_csv2html), prometheus (text exposition format), or "
                   "fio-json / fio-json-plus (fio's JSON layout)")
      ->required()
      ->check(
          CLI::IsMember(std::vector<std::string>(std::begin(stormark::controller::kExportFormats),
                                                 std::end(stormark::controller::kExportFormats))));
  export_cmd->add_option("-o,--output", export_options.output,
                         "write to FILE (default: standard output)");
  export_cmd->add_option("--push", export_options.push,
                         "prometheus: PUT the metrics to this Pushgateway (http://host:9091, "
                         "group /metrics/job/stormark unless the URL names one)");
  for (CLI::App* sub : {list_cmd, show_cmd, compare_cmd, export_cmd}) {
    sub->add_option("--db", results.db_path, "results database (default: as for run)");
  }

  stormark::controller::ReportOptions report;
  std::string report_run;
  CLI::App* report_cmd = app.add_subcommand(
      "report", "write a recorded run as one self-contained HTML page with charts");
  report_cmd->add_option("RUN", report_run, "run id, a unique prefix of one, or 'latest'")
      ->required();
  report_cmd->add_option("-o,--output", report.output, "the HTML file to write")->required();
  report_cmd->add_option("--db", report.db_path, "results database (default: as for run)");
  report_cmd->add_flag("--all-hosts", report.all_hosts,
                       "a table row, a bar and a line per host, however many (past 32 hosts the "
                       "tables and charts show groups and name the hosts that stand out)");
  report_cmd->add_option("--group-by", report.group_by,
                         "how a report of more than 32 hosts groups them: via (how the storage is "
                         "reached, and the target; the default), target, or label:KEY");

  stormark::controller::fio::FioCheckOptions fio_check;
  CLI::App* fio_cmd = app.add_subcommand(
      "fio", "fio job files: --check FILE prints the phases it makes (run it with run --fio)");
  auto* fio_check_opt = fio_cmd->add_option("--check", fio_check.path, "the job file to check")
                            ->check(CLI::ExistingFile);
  fio_cmd->add_option("JOBFILE", fio_check.path, "the job file to check, as --check JOBFILE")
      ->check(CLI::ExistingFile)
      ->excludes(fio_check_opt);
  fio_cmd->add_option("--section", fio_check.sections, "only this job (fio's --section)");

  CLI::App* help_cmd = app.add_subcommand("help", "what a workload takes: its options");
  help_cmd->require_subcommand(1);
  std::string help_workload;
  bool help_markdown = false;
  CLI::App* help_workload_cmd = help_cmd->add_subcommand(
      "workload", "every option of a workload, with aliases, type, default and help");
  help_workload_cmd->add_option("NAME", help_workload,
                                "the workload (" + stormark::controller::WorkloadNames() + ")");
  help_workload_cmd->add_flag("--markdown", help_markdown,
                              "as the Markdown table of docs/workloads/NAME-options.md");
  bool help_fio_markdown = false;
  CLI::App* help_fio_cmd = help_cmd->add_subcommand(
      "fio", "every fio option, and what a job file's use of it does under run --fio");
  help_fio_cmd->add_flag("--markdown", help_fio_markdown,
                         "as the Markdown table of docs/workloads/fio-options.md");

  const std::string command = argc > 1 ? argv[1] : "";
  if (argc > 1 && argv[1][0] != '-' && command != "run" && command != "agents" &&
      command != "results" && command != "report" && command != "certs" && command != "help" &&
      command != "fio") {
    std::fprintf(stderr,
                 "stormark: unknown command '%s' (commands: run, agents, results, report, certs, "
                 "fio, help)\n",
                 argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      // The help of the (sub)command the mistake is in: "stormark results show --help".
      std::string where = "stormark";
      const CLI::App* deepest = &app;
      int depth = 1;  // argv[depth] follows the deepest command given
      for (; !deepest->get_subcommands().empty(); ++depth) {
        deepest = deepest->get_subcommands().front();
        where += " " + deepest->get_name();
      }
      // `stormark run FILE`: the file is named, with the flag that takes it.
      std::string what = e.what();
      constexpr std::string_view kUnexpected = "The following argument was not expected: ";
      if (where == "stormark run" && what.starts_with(kUnexpected)) {
        const std::string file = what.substr(kUnexpected.size());
        if (auto text = stormark::common::ReadTextFile(file, "file"); text.ok()) {
          const bool job = stormark::controller::fio::LooksLikeJobFile(*text);
          what = file + ": a " + (job ? "fio job file" : "plan") + " is given with " +
                 (job ? "--fio" : "--plan") + ": stormark run " + (job ? "--fio " : "--plan ") +
                 file;
        }
      }
      // "results show" ("" for a mistake before any command).
      const std::string command_name =
          where == "stormark" ? "" : where.substr(std::string_view("stormark ").size());
      if (what == "A subcommand is required") {
        // `stormark results report latest`, `stormark results shwo`: the word, and the choices.
        std::string choices;
        const auto subs = deepest->get_subcommands([](const CLI::App*) { return true; });
        for (size_t i = 0; i < subs.size(); ++i) {
          choices += (i == 0 ? "" : i + 1 == subs.size() ? " or " : ", ") + subs[i]->get_name();
        }
        const bool word = depth < argc && argv[depth][0] != '-';
        const std::string in = command_name.empty() ? "" : command_name + ": ";
        what = word ? in + "unknown command '" + argv[depth] + "' (give " + choices + ")"
                    : in + "give a command: " + choices;
        if (word && command_name == "results" && std::string_view(argv[depth]) == "report") {
          what += "; the HTML report is 'stormark report RUN -o FILE'";
        }
      } else if (what == "RUN is required") {
        what = command_name +
               ": give the run: its id, a unique prefix of one, or 'latest' ('stormark results "
               "list' lists them)";
      }
      std::fprintf(stderr, "stormark: %s\n", what.c_str());
      std::fprintf(stderr, "Run '%s --help' for usage.\n", where.c_str());
      return 2;
    }
    return app.exit(e);
  }

  if (*help_fio_cmd) return stormark::controller::fio::HelpFioCommand(help_fio_markdown, stdout);
  if (*fio_cmd) {
    if (fio_check.path.empty()) {
      std::fprintf(stderr, "stormark: fio: give the job file: stormark fio --check JOBFILE\n");
      return 2;
    }
    return stormark::controller::fio::FioCheckCommand(fio_check, stdout, stderr);
  }
  if (*help_workload_cmd) {
    return stormark::controller::HelpWorkloadCommand(help_workload, help_markdown, stdout, stderr);
  }
  if (*report_cmd) {
    return stormark::controller::ReportCommand(report, report_run, stdout, stderr);
  }
  // --tls-dir fills in the files that no --tls-ca/--tls-cert/--tls-key gave.
  for (auto [files, dir] :
       {std::pair{&run.tls, &run_tls_dir}, std::pair{&agents_tls, &agents_tls_dir}}) {
    if (dir->empty()) continue;
    if (files->ca.empty()) files->ca = *dir + "/ca.crt";
    if (files->cert.empty()) files->cert = *dir + "/controller.crt";
    if (files->key.empty()) files->key = *dir + "/controller.key";
  }
  if (*certs_init) return stormark::controller::CertsInit(certs, stdout, stderr);
  if (*certs_issue) {
    certs.for_controller = certs_issue->count("--controller") > 0;
    return stormark::controller::CertsIssue(certs, stdout, stderr);
  }
  if (*agents_cmd) {
    std::vector<stormark::controller::HostPlan> hosts;
    for (const std::string& address : inventory) hosts.push_back({address, address, {}, "", ""});
    auto gathered =
        stormark::controller::GatherHosts(std::move(hosts), agents_dns, agents_inventory);
    if (!gathered.ok() || gathered->empty()) {
      std::fprintf(stderr, "stormark: %s\n",
                   gathered.ok() ? "agents: give --agent, --agents-dns or --inventory"
                                 : std::string(gathered.status().message()).c_str());
      return 2;
    }
    return stormark::controller::AgentsCommand(*gathered, agents_tls, stdout, stderr);
  }
  if (*list_cmd) return stormark::controller::ResultsList(results, stdout, stderr);
  if (*show_cmd) return stormark::controller::ResultsShow(results, run_refs[0], stdout, stderr);
  if (*export_cmd) {
    export_options.db_path = results.db_path;
    return stormark::controller::ExportCommand(export_options, export_run, stdout, stderr);
  }
  if (*compare_cmd) {
    return stormark::controller::ResultsCompare(results, compare, compare_refs, stdout, stderr);
  }

  // Flags given on the command line, and only those, override the plan.
  if (*rw_opt) run.rw = rw;
  if (*workload_opt) run.workload = workload;
  if (*mode_opt) run.mode = mode;
  if (*cache_opt) run.cache = cache;
  if (*size_opt) run.size = size;
  if (*bs_opt) run.bs = bs;
  if (*target_opt) run.target = target;
  for (auto [yes, no, name] : {std::tuple{direct_opt, no_direct_opt, "direct"},
                               std::tuple{sync_opt, no_sync_opt, "fdatasync"},
                               std::tuple{progress_opt, no_progress_opt, "progress"}}) {
    if (*yes && *no) {
      std::fprintf(stderr, "stormark: run: give --%s or --no-%s, not both\n", name, name);
      return 2;
    }
  }
  if (*direct_opt) run.direct = true;
  if (*no_direct_opt) run.direct = false;
  if (*sync_opt) run.fdatasync = true;
  if (*no_sync_opt) run.fdatasync = false;
  if (*progress_opt) run.progress = true;
  if (*no_progress_opt) run.progress = false;
  if (*hb_interval_opt) run.heartbeat_interval = heartbeat_interval;
  if (*hb_timeout_opt) run.heartbeat_timeout = heartbeat_timeout;
  if (*deadline_opt) run.deadline = deadline;
  if (*prepare_deadline_opt) run.prepare_deadline = prepare_deadline;
  return stormark::controller::RunCommand(run, *interrupts, stdout, stderr);
}

}  // namespace

int main(int argc, char** argv) {
  // Debian's Abseil checks every Mutex acquisition for lock-order cycles (its deadlock
  // detection is on unless Abseil itself was built with NDEBUG): a graph search per lock, which
  // at hundreds of hosts was a tenth of the controller's CPU. The tests keep it on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stormark: internal error: %s\n", e.what());
    return 70;
  }
}
