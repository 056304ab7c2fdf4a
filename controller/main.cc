// stormark: the controller. Runs the same storage workload on many agents at one instant
// and prints the comparison.
#include <cstdio>
#include <iostream>

#include "CLI/CLI.hpp"
#include "common/version.h"
#include "controller/agents_command.h"
#include "controller/interrupts.h"
#include "controller/local_agent.h"
#include "controller/run_command.h"
#include "controller/workloads/workload_kinds.h"

namespace {

using stormark::controller::RunOptions;

int Main(int argc, char** argv) {
  // Lives until exit: its signal thread is detached and uses it.
  auto* interrupts = new stormark::controller::Interrupts();

  CLI::App app{"stormark: runs the same storage benchmark on many hosts at one instant"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(stormark::common::kSoftwareVersion));

  RunOptions run;
  run.agent_binary = stormark::controller::LocalAgent::DefaultBinary();
  CLI::App* run_cmd = app.add_subcommand(
      "run", "run a plan (default: write then read 1 GiB) on the agents, or on a local one");
  run_cmd->add_option("--agent", run.agents,
                      "agent HOST:PORT or unix:/path, repeatable (default: start a local "
                      "agent on a temporary directory)");
  run_cmd->add_option("--plan", run.plan_path, "YAML plan file")->check(CLI::ExistingFile);
  std::string rw, size, bs, target;
  bool direct = false, fdatasync = false;
  auto* rw_opt = run_cmd->add_option("--rw", rw, "stream direction: write or read (one phase)")
                     ->check(CLI::IsMember({"write", "read"}));
  auto* size_opt = run_cmd->add_option("--size", size, "bytes per host, e.g. 512M, 4G");
  auto* bs_opt = run_cmd->add_option("--bs", bs, "block size per call, e.g. 4k, 1M");
  auto* target_opt = run_cmd->add_option("--target", target, "agent target name");
  auto* direct_opt = run_cmd->add_flag("--direct,!--no-direct", direct, "use O_DIRECT");
  auto* sync_opt = run_cmd->add_flag("--fdatasync,!--no-fdatasync", fdatasync,
                                     "fdatasync inside the timed region (writes)");
  std::string workload, mode;
  auto* workload_opt =
      run_cmd->add_option("--workload", workload,
                          "without --plan: one phase of this workload (" +
                              stormark::controller::WorkloadNames() + "; default stream)");
  run_cmd
      ->add_option("--postmark-config", run.postmark_config,
                   "a PostMark script (set number 2000, run, ...): its runs are the phases")
      ->check(CLI::ExistingFile);
  run_cmd->add_option("--set", run.sets,
                      "KEY=VALUE workload parameter for every phase, repeatable "
                      "(e.g. --set files=16:0:0:1)");
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
  run_cmd->add_option("--csv", run.csv_path,
                      "write bonnie++ CSV lines (bonnie phases) to FILE, for bon_csv2html");
  run_cmd->add_option("--dir", run.dir,
                      "directory for the embedded local agent (default: a new one under "
                      "$TMPDIR or /var/tmp)");
  bool progress = false;
  auto* progress_opt = run_cmd->add_flag("--progress,!--no-progress", progress,
                                         "live progress line (default: when stdout is a tty)");

  std::vector<std::string> inventory;
  CLI::App* agents_cmd = app.add_subcommand("agents", "print the facts of each agent");
  agents_cmd->add_option("--agent", inventory, "agent HOST:PORT or unix:/path, repeatable")
      ->required();

  if (argc > 1 && argv[1][0] != '-' && std::string(argv[1]) != "run" &&
      std::string(argv[1]) != "agents") {
    std::fprintf(stderr, "stormark: unknown command '%s' (commands: run, agents)\n", argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      std::fprintf(stderr, "stormark: %s\n", e.what());
      std::fprintf(stderr, "Run 'stormark --help' for usage.\n");
      return 2;
    }
    return app.exit(e);
  }

  if (*agents_cmd) return stormark::controller::AgentsCommand(inventory, stdout, stderr);

  // Flags given on the command line, and only those, override the plan.
  if (*rw_opt) run.rw = rw;
  if (*workload_opt) run.workload = workload;
  if (*mode_opt) run.mode = mode;
  if (*cache_opt) run.cache = cache;
  if (*size_opt) run.size = size;
  if (*bs_opt) run.bs = bs;
  if (*target_opt) run.target = target;
  if (*direct_opt) run.direct = direct;
  if (*sync_opt) run.fdatasync = fdatasync;
  if (*progress_opt) run.progress = progress;
  return stormark::controller::RunCommand(run, *interrupts, stdout, stderr);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stormark: internal error: %s\n", e.what());
    return 70;
  }
}
