// stormark-fleet-sim: one process that serves N simulated stormark agents, one loopback port
// each, so that the controller's own cost can be measured at fleet sizes no machine could run
// real agents for (bench/fleet_sim.py). sim_server.h has the server, sim_fleet.h how a call
// finds its agent, run_stream.h how a Run waits without a thread.
//
// Writes the ports (to --ports-file, else stdout), one per line in agent order, then prints a
// line starting "ready"; serves until SIGINT or SIGTERM; then writes --stats-file
// (phase_log.h).
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/synchronization/mutex.h"
#include "CLI/CLI.hpp"
#include "bench/fleet_sim/sim_fleet.h"
#include "bench/fleet_sim/sim_server.h"
#include "common/strings.h"

namespace {

using stormark::common::StrCat;

void LogLine(const std::string& line) {
  std::fprintf(stderr, "stormark-fleet-sim: %s\n", line.c_str());
  std::fflush(stderr);
}

bool WritePorts(const std::vector<int>& ports, const std::string& path) {
  FILE* out = path.empty() ? stdout : std::fopen(path.c_str(), "w");
  if (out == nullptr) return false;
  for (int port : ports) std::fprintf(out, "%d\n", port);
  return out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
}

int Main(int argc, char** argv) {
  CLI::App app{"stormark-fleet-sim: serves many simulated stormark agents from one process"};
  size_t agents = 0;
  std::string ports_file, stats_file;
  double offset_spread_ms = 0;
  uint32_t series_interval_ms = 0;
  std::string lie_word;
  size_t liar = 0;
  app.add_option("--agents", agents, "simulated agents, one loopback port each")
      ->required()
      ->check(CLI::Range(size_t{1}, size_t{30000}));
  app.add_option("--ports-file", ports_file,
                 "write the ports here, one per line, rather than to stdout");
  app.add_option("--stats-file", stats_file,
                 "on exit, write when each phase's Prepares and Runs arrived (JSON)");
  app.add_option("--clock-offset-ms-spread", offset_spread_ms,
                 "agent clocks are off by a uniform draw from [-S/2, +S/2] ms (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--series-interval-ms", series_interval_ms,
                 "each interval of a result's series covers this many ms (default: a second, as "
                 "an agent's): a short phase sends as many samples as a longer one would")
      ->check(CLI::Range(uint32_t{1}, uint32_t{60'000}));
  CLI::Option* lie_option =
      app.add_option("--lie", lie_word,
                     "one agent (--liar) reports a figure no run can produce, for attacks on the "
                     "controller")
          ->check(CLI::IsMember(stormark::fleet_sim::LieWords()));
  app.add_option("--liar", liar, "the agent that lies (default 0, the first)")->needs(lie_option);
  CLI11_PARSE(app, argc, argv);
  if (!lie_word.empty() && liar >= agents) {
    LogLine(StrCat("--liar ", liar, " is not one of the ", agents, " agents"));
    return 2;
  }

  // Signals go to sigwait below, not to gRPC's threads, which inherit this mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  stormark::fleet_sim::SimServerOptions options;
  options.agents = agents;
  options.series_interval_ms = series_interval_ms;
  if (!lie_word.empty()) {
    options.lie = *stormark::fleet_sim::ParseLie(lie_word);
    options.liar = liar;
  }
  options.clock_offsets_nanos = stormark::fleet_sim::SimFleet::SpreadOffsets(
      agents, static_cast<int64_t>(offset_spread_ms * 1e6));
  const auto start = std::chrono::steady_clock::now();
  std::string warning;
  auto sim = stormark::fleet_sim::SimServer::Start(options, &warning);
  if (!warning.empty()) LogLine(StrCat("warning: ", warning));
  if (!sim.ok()) {
    LogLine(std::string(sim.status().message()));
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!WritePorts((*sim)->ports(), ports_file)) {
    LogLine(StrCat("cannot write the ports to ", ports_file));
    return 1;
  }
  std::printf("ready: %zu agents on 127.0.0.1, one server, bound in %.2f s\n", agents, seconds);
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  (*sim)->Shutdown(2'000'000'000);
  if (!stats_file.empty()) {
    std::ofstream stats(stats_file);
    stats << (*sim)->log().Json() << "\n";
    if (!stats) {
      LogLine(StrCat("cannot write ", stats_file));
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // As in the controller and the agent: Debian's Abseil would otherwise search for lock-order
  // cycles on every Mutex acquisition.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stormark-fleet-sim: internal error: %s\n", e.what());
    return 70;
  }
}
