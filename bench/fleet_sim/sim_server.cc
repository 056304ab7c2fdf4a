#include "bench/fleet_sim/sim_server.h"

#include <sys/resource.h>

#include <chrono>
#include <set>

#include "common/strings.h"

namespace stormark::fleet_sim {
namespace {

using common::StrCat;

// Besides two per agent: gRPC's own (epoll, wakeup pipes), the files main writes.
constexpr rlim_t kSpareDescriptors = 64;

common::Status CheckDescriptors(size_t agents, std::string* warning) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return absl::OkStatus();
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  const rlim_t needed = 2 * agents + kSpareDescriptors;
  if (limit.rlim_cur < agents + kSpareDescriptors) {
    return absl::ResourceExhaustedError(
        StrCat(agents, " agents need about ", needed,
               " file descriptors (a listening socket and a connection each); RLIMIT_NOFILE "
               "allows ",
               limit.rlim_cur, ": raise its hard limit, or split the agents over processes"));
  }
  if (limit.rlim_cur < needed) {
    *warning = StrCat(agents, " agents need about ", needed,
                      " file descriptors and RLIMIT_NOFILE allows ", limit.rlim_cur,
                      ": connections past the limit will fail (accept4: Too many open files), "
                      "and their hosts time out");
  }
  return absl::OkStatus();
}

}  // namespace

SimServer::SimServer(const SimServerOptions& options)
    : fleet_(options.clock_offsets_nanos.empty() ? std::vector<int64_t>(options.agents, 0)
                                                 : options.clock_offsets_nanos,
             options.lie, options.liar),
      service_(fleet_, timers_, log_, options.series_interval_ms),
      ports_(fleet_.size(), 0) {}

common::StatusOr<std::unique_ptr<SimServer>> SimServer::Start(const SimServerOptions& options,
                                                              std::string* warning) {
  if (!options.clock_offsets_nanos.empty() &&
      options.clock_offsets_nanos.size() != options.agents) {
    return absl::InvalidArgumentError("one clock offset per agent, or none");
  }
  RETURN_IF_ERROR(CheckDescriptors(options.agents, warning));
  std::unique_ptr<SimServer> sim(new SimServer(options));
  grpc::ServerBuilder builder;
  // As the real agent (agent/rpc/server.cc): one port, one agent (no SO_REUSEPORT), and the
  // controller's keepalive pings accepted; the agent's own pings to the controller too, since
  // answering them is part of the controller's cost.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  // gRPC writes each chosen port through these pointers: ports_ is never resized.
  for (int& port : sim->ports_) {
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  }
  builder.RegisterService(&sim->service_);
  sim->server_ = builder.BuildAndStart();
  if (!sim->server_) {
    return absl::UnavailableError(StrCat("gRPC could not start one server on ", options.agents,
                                         " loopback ports (its log above says why)"));
  }
  std::set<int> distinct;
  for (int port : sim->ports_) {
    if (port <= 0 || !distinct.insert(port).second) {
      return absl::InternalError(StrCat("port ", port, " was not bound, or bound twice"));
    }
  }
  sim->fleet_.Bind(sim->ports_);
  return sim;
}

SimServer::~SimServer() { Shutdown(0); }

void SimServer::Shutdown(int64_t grace_nanos) {
  if (shut_down_) return;
  shut_down_ = true;
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::nanoseconds(grace_nanos));
  }
  // Every call is over: the streams still on a timer see it and delete themselves now.
  timers_.Stop();
}

}  // namespace stormark::fleet_sim
