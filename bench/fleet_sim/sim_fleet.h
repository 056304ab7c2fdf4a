// The simulated agents of one stormark-fleet-sim process: each is one loopback port, with its
// own host name and clock offset, and the phase it holds.
//
// Which agent a call is for: the port it arrived on. gRPC's callback API does not give a
// handler its connection's local address (peer() is the client's end, which says nothing about
// the port it reached), but every HTTP/2 request carries :authority, which a channel built for
// "127.0.0.1:PORT" (the controller's AgentClient::MakeChannel: plain text, no authority
// override) sets to exactly that. ForAuthority() maps it back to the agent, so one server
// serves every port and no server, thread or queue is kept per agent. A client that sets its
// own authority (a TLS name override, grpc.default_authority) is refused: the simulator is
// plain text only.
//
// The agents' facts are fixed at start; Hold(), Held(), Release(), Arm(), Armed() and
// ForAuthority() are thread-safe.
#ifndef STORMARK_BENCH_FLEET_SIM_SIM_FLEET_H_
#define STORMARK_BENCH_FLEET_SIM_SIM_FLEET_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "bench/fleet_sim/lies.h"
#include "bench/fleet_sim/phase_shape.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::fleet_sim {

// The one target every simulated agent has: a null device, as `sink: {null: true}` is in a real
// agent's config.
inline constexpr char kTargetName[] = "sink";

class RunStream;

// Where a Start finds the Run stream it starts: the stream sets `stream` when it is armed and
// clears it when gRPC is done with it, so a Start never reaches a deleted stream.
struct ArmedRun {
  absl::Mutex mu;
  RunStream* stream ABSL_GUARDED_BY(mu) = nullptr;
};

class SimAgent {
 public:
  // `lie`: what it says instead of the truth (lies.h); Lie::kNone for an honest agent.
  SimAgent(size_t index, int64_t clock_offset_nanos, Lie lie = Lie::kNone);

  size_t index() const { return index_; }
  // This agent's wall clock runs this far ahead of the process's CLOCK_REALTIME.
  int64_t clock_offset_nanos() const { return clock_offset_nanos_; }
  // CLOCK_REALTIME plus the offset: the clock every time this agent reports is on.
  int64_t NowUnixNanos() const;
  Lie lie() const { return lie_; }

  // What GetInfo answers: a small host ("sim-00042"), one null target, randio.
  stormark::v1::AgentInfo Info() const;

  // The phase this agent prepared last; Run looks it up. Tokens are not checked: the
  // simulator has one controller and no ownership.
  void Hold(std::shared_ptr<const PhaseShape> phase) ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<const PhaseShape> Held() const ABSL_LOCKS_EXCLUDED(mu_);
  // Lets go of the held phase if it is `phase_id`; whether it was.
  bool Release(const std::string& phase_id) ABSL_LOCKS_EXCLUDED(mu_);
  // The armed Run of this agent, the last one armed.
  void Arm(std::shared_ptr<ArmedRun> run) ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<ArmedRun> Armed() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const size_t index_;
  const int64_t clock_offset_nanos_;
  const Lie lie_;
  const std::string hostname_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const PhaseShape> held_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<ArmedRun> armed_ ABSL_GUARDED_BY(mu_);
};

class SimFleet {
 public:
  // One agent per offset: agent i's clock runs offsets_nanos[i] ahead. Agent `liar` tells
  // `lie`; the others are honest.
  explicit SimFleet(const std::vector<int64_t>& offsets_nanos, Lie lie = Lie::kNone,
                    size_t liar = 0);

  size_t size() const { return agents_.size(); }
  SimAgent& agent(size_t i) { return *agents_[i]; }

  // Agent i serves ports[i] (one port per agent, ports[i] in 1..65535). Once, after the server
  // has bound them and before anyone is told which they are.
  void Bind(const std::vector<int>& ports);

  // The agent whose port an :authority ("127.0.0.1:40123") names, or nullptr.
  SimAgent* ForAuthority(std::string_view authority);

  // Offsets drawn uniformly from [-spread/2, +spread/2], with a fixed seed.
  static std::vector<int64_t> SpreadOffsets(size_t count, int64_t spread_nanos);

 private:
  std::vector<std::unique_ptr<SimAgent>> agents_;
  // By port: agent index + 1, or 0. Atomic only so that a call that races Bind() (from a client
  // that guessed a port) reads no torn value.
  std::vector<std::atomic<int32_t>> by_port_;
};

}  // namespace stormark::fleet_sim

#endif  // STORMARK_BENCH_FLEET_SIM_SIM_FLEET_H_
