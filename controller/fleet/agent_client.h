// One agent, as the controller sees it: a channel, its facts, its clock offset, and the
// phase calls. Every error names the host ("host db1:7420: unreachable: ...").
//
// A phase belongs to the controller that prepared it: the client keeps the token Prepare
// returned and sends it with every later call naming that phase (Run, Abort, Cleanup,
// Heartbeat). It never shows the token to anyone.
//
// Thread-compatible: one caller drives one client at a time (a call, then the calls its `done`
// starts); different clients may be used from different threads. Abort() may be called from
// any thread, also during Run().
#ifndef STORMARK_CONTROLLER_FLEET_AGENT_CLIENT_H_
#define STORMARK_CONTROLLER_FLEET_AGENT_CLIENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/clock.h"
#include "common/status.h"
#include "common/tls.h"
#include "controller/fleet/clock_sync.h"
#include "stormark/v1/agent.grpc.pb.h"

namespace stormark::controller {

// How the controller reaches an agent: plain text when `tls` is null, else mutual TLS with
// these files, expecting the agent's certificate to name `tls_name` (when empty, the host
// part of the address, as gRPC checks by default). `tls` must outlive the clients.
struct AgentSecurity {
  const common::TlsPem* tls = nullptr;
  std::string tls_name;
};

// The controller's mutual-TLS files: each of `flags` given (--tls-ca, --tls-cert, --tls-key)
// overrides the plan's. Read and checked; nullopt when neither gives any (plain text).
common::StatusOr<std::optional<common::TlsPem>> LoadControllerTls(const common::TlsFiles& flags,
                                                                  const common::TlsFiles& plan);

class AgentClient {
 public:
  // `host` is how the user named the agent (used as its label); `channel` reaches it.
  AgentClient(std::string host, std::shared_ptr<grpc::Channel> channel, const common::Clock& clock);
  // Cancels the calls in flight and waits until every call's context is gone, so that the
  // channel's last reference goes on this thread. A context in a gRPC frame (a copy of a
  // call's callback, a call chained from another's callback) can outlive the callback that
  // reported the call over; gRPC 1.51 cannot destroy a channel on its own callback thread:
  // it joins that thread and frees the queue it runs on (grpc/grpc#32584).
  ~AgentClient() ABSL_LOCKS_EXCLUDED(calls_mu_);
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  // A channel to HOST:PORT or unix:/path, with keepalive so a dead peer is noticed.
  static std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                                    const AgentSecurity& security = {});

  // A client for an agent address as the user wrote it, labelled `name` (or the address
  // when `name` is empty). INVALID_ARGUMENT for a malformed address; nothing touches the
  // network yet.
  static common::StatusOr<std::unique_ptr<AgentClient>> ForAddress(
      const std::string& address, const common::Clock& clock, const std::string& name = "",
      const AgentSecurity& security = {});

  // The target phases use on this agent when they name none (a plan host's `target`).
  void set_default_target(std::string target) { default_target_ = std::move(target); }

  const std::string& host() const { return host_; }

  // Every call comes in two forms. The ...Async form starts the call without blocking and
  // runs `done` once, when the call is over, on a gRPC thread (or on the calling thread, when
  // it fails at once): `done` must not block, and the client must outlive the call. The fleet
  // drives its hosts with these, so it needs no thread per host. The plain form waits for its
  // own call.
  using DoneFn = std::function<void(const common::Status&)>;

  // Fetches the agent's facts and checks protocol compatibility. UNAVAILABLE when the agent
  // cannot be reached within `timeout_ms`.
  common::Status Connect(int timeout_ms = 5000);
  void ConnectAsync(int timeout_ms, DoneFn done);
  // Valid after a successful Connect.
  const stormark::v1::AgentInfo& info() const { return info_; }

  // Estimates the agent's clock offset from `rounds` exchanges, one after another.
  common::Status SyncClock(int rounds = 8);
  void SyncClockAsync(int rounds, DoneFn done);
  // More exchanges for an estimate made moments ago: the new one replaces it only if its round
  // trip is shorter, since queueing only ever lengthens a round trip.
  void RefineClockAsync(int rounds, DoneFn done);
  const ClockEstimate& clock() const { return estimate_; }

  // The target a phase should use on this agent: `wanted`, else the default target, else
  // the agent's only target. NOT_FOUND names the targets the agent has.
  common::StatusOr<std::string> ResolveTarget(const std::string& wanted) const;

  // FAILED_PRECONDITION when the agent says it cannot run `workload` ("stream", "bonnie").
  // An agent that does not list its workloads is given the benefit of the doubt.
  common::Status CheckWorkload(const std::string& workload) const;

  // Prepare of `spec` on the agent; the call gives up after `timeout_nanos` (0: never). On
  // success the client keeps the phase's token for the calls that follow.
  common::StatusOr<stormark::v1::PrepareReply> Prepare(const stormark::v1::PhaseSpec& spec,
                                                       int64_t timeout_nanos = 0);
  using PrepareFn = std::function<void(common::StatusOr<stormark::v1::PrepareReply>)>;
  void PrepareAsync(const stormark::v1::PhaseSpec& spec, int64_t timeout_nanos, PrepareFn done);

  // Runs a prepared phase, starting at `start_at_controller_nanos` on the controller's clock
  // (translated to the agent's with the measured offset). Calls `on_progress` for each
  // progress update (for RunAsync, on a gRPC thread). Returns the agent's result, or an
  // error if the stream broke.
  using ProgressFn = std::function<void(const stormark::v1::RunUpdate::Progress&)>;
  common::StatusOr<stormark::v1::PhaseResult> Run(const std::string& phase_id,
                                                  int64_t start_at_controller_nanos,
                                                  const ProgressFn& on_progress);
  using ResultFn = std::function<void(common::StatusOr<stormark::v1::PhaseResult>)>;
  void RunAsync(const std::string& phase_id, int64_t start_at_controller_nanos,
                ProgressFn on_progress, ResultFn done);

  // True when the agent arms a Run ahead of its start (protocol 1.3): ArmAsync, then StartAsync.
  bool arms_runs() const;
  // Opens the Run stream of a prepared phase without an instant: `on_armed` is called (on a
  // gRPC thread) once the agent is ready for its Start; then as RunAsync.
  using ArmedFn = std::function<void()>;
  void ArmAsync(const std::string& phase_id, ArmedFn on_armed, ProgressFn on_progress,
                ResultFn done);
  // Gives the armed phase its start instant, `start_at_controller_nanos` on the controller's
  // clock (translated with the offset measured last). On success, `ahead_nanos` is how long
  // before the instant the Start reached the agent, on its clock (negative: after it).
  using StartFn = std::function<void(const common::Status&, int64_t ahead_nanos)>;
  void StartAsync(const std::string& phase_id, int64_t start_at_controller_nanos, StartFn done);

  // Asks the agent to abort `phase_id`; a Run() in flight then returns the agent's ABORTED
  // result. Best effort: an unreachable agent aborts by itself when its controller goes.
  void Abort(const std::string& phase_id);
  void AbortAsync(const std::string& phase_id, std::function<void()> done);

  // Removes the phase's files on the agent; DEADLINE_EXCEEDED after `timeout_ms`. `left`
  // gets what the agent could not remove, each "name: why".
  common::Status Cleanup(const std::string& phase_id, int timeout_ms = 60'000,
                         std::vector<std::string>* left = nullptr);
  using CleanupFn = std::function<void(const common::Status&, std::vector<std::string> left)>;
  void CleanupAsync(const std::string& phase_id, int timeout_ms, CleanupFn done);

  // Sends one Heartbeat naming `phase_id` ("" between phases) without blocking. `done` runs
  // on a gRPC thread with the outcome once the agent answers or `timeout_ms` has passed.
  using HeartbeatFn =
      std::function<void(const common::Status&, const stormark::v1::HeartbeatReply&)>;
  void HeartbeatAsync(const std::string& phase_id, int timeout_ms, HeartbeatFn done);

  // Gives the agent up: cancels every call in flight (a Run() in flight returns at once) and
  // makes every later call fail at once. For a host that stopped answering. Thread-safe.
  void GiveUp() ABSL_LOCKS_EXCLUDED(calls_mu_);

 private:
  class RunCall;

  // Counts a call as alive from its construction to its destruction. The first member of a
  // call's state, so that it goes after the call's context (see ~AgentClient).
  class LiveCall {
   public:
    explicit LiveCall(AgentClient& client) ABSL_LOCKS_EXCLUDED(client.calls_mu_);
    ~LiveCall();
    LiveCall(const LiveCall&) = delete;
    LiveCall& operator=(const LiveCall&) = delete;

   private:
    AgentClient& client_;
  };

  // Keeps a call's context where GiveUp() can cancel it, from its start to its end.
  void Track(grpc::ClientContext* context) ABSL_LOCKS_EXCLUDED(calls_mu_);
  void Untrack(grpc::ClientContext* context) ABSL_LOCKS_EXCLUDED(calls_mu_);

  // Starts one unary call: `start(context, request, reply, callback)` calls the stub's async
  // method. `done(status, reply)` runs once the call is over, after its context is gone.
  template <typename Request, typename Reply, typename Start>
  void CallAsync(Request request, int64_t timeout_nanos, Start start,
                 std::function<void(const grpc::Status&, Reply&)> done);
  // The next of `left` clock exchanges, then the estimate from all of `samples` (with
  // `refine`, only if it beats the one in force).
  void SyncRound(std::shared_ptr<std::vector<ClockSample>> samples, int left, bool refine,
                 DoneFn done);

  // A grpc::Status as one line naming the host and what it means for a user.
  common::Status FromGrpc(const grpc::Status& status, std::string_view call) const;

  const std::string host_;
  // Said after a connection failure when the address gave no port: which one was tried.
  std::string where_;
  // Whether the channel uses TLS, for error messages.
  bool tls_ = false;
  bool unix_socket_ = false;  // The address is unix:PATH.
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<stormark::v1::Agent::Stub> stub_;
  const common::Clock& clock_;
  stormark::v1::AgentInfo info_;
  ClockEstimate estimate_;
  std::string default_target_;

  // The token of `phase_id` when this client prepared it, else "".
  std::string TokenFor(const std::string& phase_id) const ABSL_LOCKS_EXCLUDED(token_mu_);

  absl::Mutex calls_mu_;
  std::vector<grpc::ClientContext*> calls_ ABSL_GUARDED_BY(calls_mu_);  // Calls in flight.
  bool given_up_ ABSL_GUARDED_BY(calls_mu_) = false;
  int live_calls_ ABSL_GUARDED_BY(calls_mu_) = 0;  // Calls whose state exists (LiveCall).

  mutable absl::Mutex token_mu_;
  std::string token_phase_ ABSL_GUARDED_BY(token_mu_);  // The phase this client last prepared.
  std::string token_ ABSL_GUARDED_BY(token_mu_);        // Its PrepareReply.phase_token.
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_AGENT_CLIENT_H_
