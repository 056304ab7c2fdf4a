// stormark-agent: runs benchmark phases on this host's configured targets for a controller.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"
#include "CLI/CLI.hpp"
#include "common/address.h"
#include "common/strings.h"
#include "agent/config/config.h"
#include "agent/config/policy.h"
#include "agent/rpc/server.h"
#include "common/clock.h"
#include "common/log_text.h"
#include "common/tls.h"
#include "common/version.h"
#include "stormark/v1/agent.grpc.pb.h"

namespace {

// The last guard: every line is one line (no newline or NUL from anywhere) and bounded.
void LogLine(const std::string& line) {
  std::fprintf(stderr, "stormark-agent: %s\n", stormark::common::LogSafeLine(line, 4096).c_str());
  std::fflush(stderr);
}

// --abort-held-phase: asks the agent serving `listen` (its unix socket) to abort whatever
// phase it holds. The agent grants it only to root and its own user, by peer credentials.
int AbortHeldPhase(const std::string& listen, const std::string& reason) {
  auto address = stormark::common::NormalizeAddress(listen);
  if (!address.ok() || !address->starts_with("unix:")) {
    LogLine(stormark::common::StrCat(
        "--abort-held-phase talks to the running agent over its unix socket: give --listen "
        "unix:/path, the address that agent serves (not '",
        listen, "')"));
    return 2;
  }
  auto stub = stormark::v1::Agent::NewStub(
      grpc::CreateChannel(*address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  // An aborted phase may take a while to stop and remove its files.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  stormark::v1::AbortHeldPhaseRequest request;
  request.set_reason(reason.empty() ? stormark::common::StrCat("stormark-agent --abort-held-phase "
                                                               "by uid ",
                                                               getuid())
                                    : reason);
  stormark::v1::AbortHeldPhaseReply reply;
  const grpc::Status status = stub->AbortHeldPhase(&context, request, &reply);
  if (!status.ok()) {
    LogLine(stormark::common::StrCat("agent at ", *address, ": ", status.error_message()));
    return 1;
  }
  if (reply.phase_id().empty()) {
    LogLine(stormark::common::StrCat("agent at ", *address, " holds no phase"));
  } else if (!reply.stuck_worker().empty()) {
    LogLine(stormark::common::StrCat("aborted phase '", reply.phase_id(),
                                     "'; a worker is stuck in ", reply.stuck_worker(),
                                     ": its files are removed when that I/O returns"));
  } else {
    LogLine(
        stormark::common::StrCat("aborted phase '", reply.phase_id(), "' and removed its files"));
  }
  return 0;
}

int Main(int argc, char** argv) {
  CLI::App app{"stormark-agent: runs storage benchmark phases for a stormark controller"};
  stormark::agent::AgentServerOptions options;
  std::string config_path;
  app.add_option("--listen", options.listen,
                 "address to serve on: unix:/path (peer credentials checked against the "
                 "config's access), or HOST:PORT / [V6]:PORT (mutual TLS; port 0 picks one)")
      ->capture_default_str();
  app.add_option("--config", config_path, "YAML file naming the targets this host allows");
  bool abort_held = false;
  std::string abort_reason;
  app.add_flag("--abort-held-phase", abort_held,
               "instead of serving: abort whatever phase the agent serving --listen unix:/path "
               "holds, whoever prepared it, and exit (root or the agent's own user only)");
  app.add_option("--reason", abort_reason, "with --abort-held-phase: why, for the agent's log");
  app.add_flag("--insecure", options.insecure,
               "allow plain text on TCP, loopback included: anyone who reaches the port, every "
               "local user too, can command this agent (labs only)");
  stormark::common::TlsFiles tls;
  app.add_option("--tls-ca", tls.ca,
                 "CA certificate controllers must be signed by (overrides "
                 "the config's tls.ca)");
  app.add_option("--tls-cert", tls.cert, "this agent's certificate (overrides tls.cert)");
  app.add_option("--tls-key", tls.key, "this agent's private key (overrides tls.key)");
  app.set_version_flag("--version", stormark::common::VersionText("stormark-agent"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    LogLine(e.what());
    std::fprintf(stderr, "Run 'stormark-agent --help' for usage.\n");
    return 2;
  }
  if (abort_held) return AbortHeldPhase(options.listen, abort_reason);
  if (config_path.empty()) {
    LogLine("--config is required");
    std::fprintf(stderr, "Run 'stormark-agent --help' for usage.\n");
    return 2;
  }

  // SIGINT and SIGTERM are taken by one thread with sigwait, so the phase's files are removed
  // before the process ends. Blocked before any other thread exists, so all inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto config = stormark::agent::LoadAgentConfig(config_path);
  if (!config.ok()) {
    LogLine(std::string(config.status().message()));
    return 2;
  }
  options.config = std::move(*config);
  for (auto [flag, field] :
       {std::pair{&tls.ca, &options.config.tls.ca}, std::pair{&tls.cert, &options.config.tls.cert},
        std::pair{&tls.key, &options.config.tls.key}}) {
    if (!flag->empty()) *field = *flag;
  }
  // What the agent reads and runs must be its own or root's (agent/config/strict_modes.h).
  std::vector<std::string> warnings;
  if (auto trusted = stormark::agent::CheckTrustedFiles(options.config, config_path, &warnings);
      !trusted.ok()) {
    LogLine(std::string(trusted.message()));
    return 2;
  }
  for (const std::string& warning : warnings) LogLine(warning);
  options.log = LogLine;
  options.protocol = stormark::common::OurProtocol();
  const std::string targets = options.config.TargetNames();

  auto server =
      stormark::agent::AgentServer::Start(std::move(options), stormark::common::SystemClock());
  if (!server.ok()) {
    LogLine(std::string(server.status().message()));
    return 1;
  }
  LogLine(stormark::common::StrCat("listening on ", (*server)->address(), " (",
                                   (*server)->security(), ", version ",
                                   stormark::common::kSoftwareVersion, ", protocol ",
                                   stormark::common::FormatVersion(stormark::common::OurProtocol()),
                                   ", targets: ", targets, ")"));

  std::thread signal_thread([&signals, s = server->get()] {
    int sig = 0;
    sigwait(&signals, &sig);
    const std::string held = s->HeldPhase();
    LogLine(stormark::common::StrCat(
        "caught ", sig == SIGINT ? "SIGINT" : "SIGTERM",
        held.empty()
            ? ": stopping (no phase held)"
            : stormark::common::StrCat(": aborting phase '", held, "' and removing its files")));
    s->Shutdown();
  });
  (*server)->Wait();
  signal_thread.join();
  LogLine("stopped");
  return 0;
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
    std::fprintf(stderr, "stormark-agent: internal error: %s\n", e.what());
    return 70;
  }
}
