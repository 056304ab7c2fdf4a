#include "controller/fleet/agent_client.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "absl/synchronization/notification.h"

#include "common/address.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/version.h"
#include "controller/fleet/result_check.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

std::chrono::system_clock::time_point AfterNanos(int64_t nanos) {
  return std::chrono::system_clock::now() + std::chrono::nanoseconds(nanos);
}

constexpr int64_t kNanosPerMilli = 1'000'000;

}  // namespace

AgentClient::LiveCall::LiveCall(AgentClient& client) : client_(client) {
  absl::MutexLock lock(&client_.calls_mu_);
  ++client_.live_calls_;
}

AgentClient::LiveCall::~LiveCall() {
  absl::MutexLock lock(&client_.calls_mu_);
  --client_.live_calls_;
}

AgentClient::~AgentClient() {
  absl::MutexLock lock(&calls_mu_);
  for (grpc::ClientContext* context : calls_) context->TryCancel();
  calls_mu_.Await(absl::Condition(
      +[](int* live) { return *live == 0; }, &live_calls_));
}

void AgentClient::Track(grpc::ClientContext* context) {
  absl::MutexLock lock(&calls_mu_);
  // A context cancelled before its call starts makes the call fail at once.
  if (given_up_) context->TryCancel();
  calls_.push_back(context);
}

void AgentClient::Untrack(grpc::ClientContext* context) {
  absl::MutexLock lock(&calls_mu_);
  std::erase(calls_, context);
}

void AgentClient::GiveUp() {
  absl::MutexLock lock(&calls_mu_);
  given_up_ = true;
  for (grpc::ClientContext* context : calls_) context->TryCancel();
}

template <typename Request, typename Reply, typename Start>
void AgentClient::CallAsync(Request request, int64_t timeout_nanos, Start start,
                            std::function<void(const grpc::Status&, Reply&)> done) {
  // Owned by the callback, which gRPC runs once and then destroys.
  struct Call {
    explicit Call(AgentClient& client) : live(client) {}
    LiveCall live;
    grpc::ClientContext context;
    Request request;
    Reply reply;
  };
  auto call = std::make_shared<Call>(*this);
  call->request = std::move(request);
  if (timeout_nanos > 0) call->context.set_deadline(AfterNanos(timeout_nanos));
  Track(&call->context);
  grpc::ClientContext* context = &call->context;
  const Request* sent = &call->request;
  Reply* reply = &call->reply;
  start(context, sent, reply, [this, call, done = std::move(done)](grpc::Status status) mutable {
    Untrack(&call->context);
    Reply got = std::move(call->reply);
    // The context holds a reference to the channel: let it go before `done` tells the owner
    // that the call is over, so that a destructor of this client rarely has to wait for it.
    call.reset();
    done(status, got);
  });
}

StatusOr<std::optional<common::TlsPem>> LoadControllerTls(const common::TlsFiles& flags,
                                                          const common::TlsFiles& plan) {
  common::TlsFiles files = plan;
  for (auto [flag, field] : {std::pair{&flags.ca, &files.ca}, std::pair{&flags.cert, &files.cert},
                             std::pair{&flags.key, &files.key}}) {
    if (!flag->empty()) *field = *flag;
  }
  if (files.empty()) return std::optional<common::TlsPem>();
  ASSIGN_OR_RETURN(common::TlsPem pem,
                   common::LoadTlsFiles(files, flags.empty() ? "plan tls" : "--tls-*"));
  return std::optional<common::TlsPem>(std::move(pem));
}

AgentClient::AgentClient(std::string host, std::shared_ptr<grpc::Channel> channel,
                         const common::Clock& clock)
    : host_(std::move(host)),
      channel_(std::move(channel)),
      stub_(stormark::v1::Agent::NewStub(channel_)),
      clock_(clock) {}

std::shared_ptr<grpc::Channel> AgentClient::MakeChannel(const std::string& address,
                                                        const AgentSecurity& security) {
  grpc::ChannelArguments args;
  // Notice a dead or partitioned agent during a long phase within about 20 s.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Results carry histograms and time series; allow large ones. Requests are small: one
  // over the agent's limit fails here, with a clear status, rather than on the wire.
  args.SetMaxReceiveMessageSize(common::kMaxReplyBytes);
  args.SetMaxSendMessageSize(common::kMaxRequestBytes);
  if (security.tls == nullptr) {
    return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  }
  if (!security.tls_name.empty()) {
    args.SetSslTargetNameOverride(security.tls_name);
  }
  return grpc::CreateCustomChannel(address, common::MutualTlsChannelCredentials(*security.tls),
                                   args);
}

StatusOr<std::unique_ptr<AgentClient>> AgentClient::ForAddress(const std::string& address,
                                                               const common::Clock& clock,
                                                               const std::string& name,
                                                               const AgentSecurity& security) {
  ASSIGN_OR_RETURN(std::string target, common::NormalizeAddress(address));
  if (security.tls != nullptr && target.starts_with("unix:")) {
    return absl::InvalidArgumentError(
        StrCat("agent address '", address, "': TLS is for network addresses, not unix sockets"));
  }
  auto client = std::make_unique<AgentClient>(name.empty() ? address : name,
                                              MakeChannel(target, security), clock);
  client->tls_ = security.tls != nullptr;
  client->unix_socket_ = target.starts_with("unix:");
  if (!common::AddressHasPort(address)) {
    client->where_ = StrCat(" (tried ", target, ": no port was given, and ",
                            common::kDefaultAgentPort, " is the default)");
  }
  return client;
}

void AgentClient::ConnectAsync(int timeout_ms, DoneFn done) {
  stormark::v1::GetInfoRequest request;
  *request.mutable_controller_protocol() = common::OurProtocol();
  // Fails at once on a refused connection or an unknown name (no wait_for_ready); waits only
  // for silence.
  CallAsync<stormark::v1::GetInfoRequest, stormark::v1::AgentInfo>(
      std::move(request), timeout_ms * kNanosPerMilli,
      [this](grpc::ClientContext* context, const auto* request, auto* reply, auto callback) {
        stub_->async()->GetInfo(context, request, reply, std::move(callback));
      },
      [this, done = std::move(done)](const grpc::Status& status, stormark::v1::AgentInfo& info) {
        Status result = FromGrpc(status, "GetInfo");
        if (result.ok()) {
          info_ = std::move(info);
          result = common::Annotate(common::CheckProtocolCompatible(
                                        common::OurProtocol(), "this controller", info_.protocol(),
                                        StrCat("agent ", info_.agent_version())),
                                    StrCat("host ", host_));
        }
        done(result);
      });
}

void AgentClient::SyncClockAsync(int rounds, DoneFn done) {
  auto samples = std::make_shared<std::vector<ClockSample>>();
  samples->reserve(rounds);
  SyncRound(std::move(samples), rounds, /*refine=*/false, std::move(done));
}

void AgentClient::RefineClockAsync(int rounds, DoneFn done) {
  auto samples = std::make_shared<std::vector<ClockSample>>();
  samples->reserve(rounds);
  SyncRound(std::move(samples), rounds, /*refine=*/true, std::move(done));
}

void AgentClient::SyncRound(std::shared_ptr<std::vector<ClockSample>> samples, int left,
                            bool refine, DoneFn done) {
  if (left <= 0) {
    if (!samples->empty()) {
      const ClockEstimate estimate = EstimateClock(*samples);
      if (!refine || estimate.rtt_nanos < estimate_.rtt_nanos) estimate_ = estimate;
    }
    done(absl::OkStatus());
    return;
  }
  stormark::v1::SyncClockRequest request;
  const int64_t t0 = clock_.NowUnixNanos();
  request.set_controller_send_unix_nanos(t0);
  CallAsync<stormark::v1::SyncClockRequest, stormark::v1::SyncClockReply>(
      std::move(request), 2000 * kNanosPerMilli,
      [this](grpc::ClientContext* context, const auto* request, auto* reply, auto callback) {
        stub_->async()->SyncClock(context, request, reply, std::move(callback));
      },
      [this, t0, samples = std::move(samples), left, refine, done = std::move(done)](
          const grpc::Status& status, stormark::v1::SyncClockReply& reply) mutable {
        const int64_t t3 = clock_.NowUnixNanos();
        if (Status s = FromGrpc(status, "SyncClock"); !s.ok()) {
          done(s);
          return;
        }
        if (Status s =
                CheckClockReading(reply.agent_receive_unix_nanos(), reply.agent_send_unix_nanos());
            !s.ok()) {
          done(absl::DataLossError(StrCat(
              "host ", host_, ": the agent's clock reading is not plausible: ", s.message())));
          return;
        }
        samples->push_back(
            {t0, reply.agent_receive_unix_nanos(), reply.agent_send_unix_nanos(), t3});
        SyncRound(std::move(samples), left - 1, refine, std::move(done));
      });
}

StatusOr<std::string> AgentClient::ResolveTarget(const std::string& requested) const {
  const std::string& wanted = requested.empty() ? default_target_ : requested;
  std::string names;
  for (const auto& t : info_.targets()) {
    if (!wanted.empty() && t.name() == wanted) return wanted;
    names += (names.empty() ? "" : ", ") + t.name();
  }
  if (wanted.empty() && info_.targets_size() == 1) return info_.targets(0).name();
  if (wanted.empty()) {
    return absl::InvalidArgumentError(StrCat("host ", host_, ": the agent has several targets (",
                                             names, "); name one with --target"));
  }
  return absl::NotFoundError(StrCat("host ", host_, ": no target '", wanted,
                                    "' (the agent has: ", names.empty() ? "none" : names, ")"));
}

Status AgentClient::CheckWorkload(const std::string& workload) const {
  if (info_.workloads().empty()) return absl::OkStatus();
  std::string known;
  for (const auto& w : info_.workloads()) {
    if (w == workload) return absl::OkStatus();
    known += (known.empty() ? "" : ", ") + w;
  }
  return absl::FailedPreconditionError(StrCat("host ", host_, ": agent ", info_.agent_version(),
                                              " cannot run workload '", workload,
                                              "' (it runs: ", known, "); upgrade it"));
}

void AgentClient::PrepareAsync(const stormark::v1::PhaseSpec& spec, int64_t timeout_nanos,
                               PrepareFn done) {
  {
    absl::MutexLock lock(&token_mu_);
    token_phase_.clear();
    token_.clear();
  }
  stormark::v1::PrepareRequest request;
  *request.mutable_controller_protocol() = common::OurProtocol();
  *request.mutable_spec() = spec;
  CallAsync<stormark::v1::PrepareRequest, stormark::v1::PrepareReply>(
      std::move(request), timeout_nanos,
      [this](grpc::ClientContext* context, const auto* request, auto* reply, auto callback) {
        stub_->async()->Prepare(context, request, reply, std::move(callback));
      },
      [this, phase_id = spec.phase_id(), done = std::move(done)](
          const grpc::Status& status, stormark::v1::PrepareReply& reply) {
        if (Status s = FromGrpc(status, "Prepare"); !s.ok()) {
          done(s);
          return;
        }
        {
          absl::MutexLock lock(&token_mu_);
          token_phase_ = phase_id;
          token_ = reply.phase_token();
        }
        reply.clear_phase_token();  // Nobody else needs it.
        done(std::move(reply));
      });
}

std::string AgentClient::TokenFor(const std::string& phase_id) const {
  absl::MutexLock lock(&token_mu_);
  return !phase_id.empty() && phase_id == token_phase_ ? token_ : "";
}

void AgentClient::StartAsync(const std::string& phase_id, int64_t start_at_controller_nanos,
                             StartFn done) {
  stormark::v1::StartRequest request;
  request.set_phase_id(phase_id);
  request.set_phase_token(TokenFor(phase_id));
  const int64_t start_at = start_at_controller_nanos + estimate_.offset_nanos;
  request.set_start_at_unix_nanos(start_at);
  // Past the instant: a Start that arrives after it starts the phase late, which its result
  // says; one that fails leaves the phase armed, and the caller aborts it.
  const int64_t timeout = std::max<int64_t>(start_at_controller_nanos - clock_.NowUnixNanos(), 0) +
                          5000 * kNanosPerMilli;
  CallAsync<stormark::v1::StartRequest, stormark::v1::StartReply>(
      std::move(request), timeout,
      [this](grpc::ClientContext* context, const auto* request, auto* reply, auto callback) {
        stub_->async()->Start(context, request, reply, std::move(callback));
      },
      [this, start_at, done = std::move(done)](const grpc::Status& status,
                                               stormark::v1::StartReply& reply) {
        // The agent's word: a time that is not one (0, negative) says nothing, and must not
        // overflow the difference.
        const int64_t received = reply.received_unix_nanos();
        done(FromGrpc(status, "Start"), received > 0 ? start_at - received : 0);
      });
}

void AgentClient::AbortAsync(const std::string& phase_id, std::function<void()> done) {
  // The Run call is left open: the agent stops the workload and closes the stream with an
  // ABORTED result, which says how far it got.
  stormark::v1::AbortRequest request;
  request.set_phase_id(phase_id);
  // None yet while this client's Prepare is under way: the agent then goes by identity.
  request.set_phase_token(TokenFor(phase_id));
  CallAsync<stormark::v1::AbortRequest, stormark::v1::AbortReply>(
      std::move(request), 5000 * kNanosPerMilli,
      [this](grpc::ClientContext* context, const auto* request, auto* reply, auto callback) {
        stub_->async()->Abort(context, request, reply, std::move(callback));
      },
      // Best effort: the agent may be gone.
      [done = std::move(done)](const grpc::Status&, stormark::v1::AbortReply&) {
        if (done) done();
      });
}

void AgentClient::CleanupAsync(const std::string& phase_id, int timeout_ms, CleanupFn done) {
  stormark::v1::CleanupRequest request;
  request.set_phase_id(phase_id);
  request.set_phase_token(TokenFor(phase_id));
  CallAsync<stormark::v1::CleanupRequest, stormark::v1::CleanupReply>(
      std::move(request), timeout_ms * kNanosPerMilli,
      [this](grpc::ClientContext* context, const auto* request, auto* reply, auto callback) {
        stub_->async()->Cleanup(context, request, reply, std::move(callback));
      },
      [this, done = std::move(done)](const grpc::Status& status,
                                     stormark::v1::CleanupReply& reply) {
        done(FromGrpc(status, "Cleanup"),
             std::vector<std::string>(reply.left().begin(), reply.left().end()));
      });
}

void AgentClient::HeartbeatAsync(const std::string& phase_id, int timeout_ms, HeartbeatFn done) {
  stormark::v1::HeartbeatRequest request;
  request.set_phase_id(phase_id);
  request.set_phase_token(TokenFor(phase_id));
  CallAsync<stormark::v1::HeartbeatRequest, stormark::v1::HeartbeatReply>(
      std::move(request), timeout_ms * kNanosPerMilli,
      [this](grpc::ClientContext* context, const auto* request, auto* reply, auto callback) {
        stub_->async()->Heartbeat(context, request, reply, std::move(callback));
      },
      [this, done = std::move(done)](const grpc::Status& status,
                                     stormark::v1::HeartbeatReply& reply) {
        done(FromGrpc(status, "Heartbeat"), reply);
      });
}

// The plain forms: each starts its ...Async call and waits for its `done`, which runs after the
// call's context is gone, so the caller may destroy the client as soon as it returns.

Status AgentClient::Connect(int timeout_ms) {
  absl::Notification over;
  Status result;
  ConnectAsync(timeout_ms, [&](const Status& s) {
    result = s;
    over.Notify();
  });
  over.WaitForNotification();
  return result;
}

Status AgentClient::SyncClock(int rounds) {
  absl::Notification over;
  Status result;
  SyncClockAsync(rounds, [&](const Status& s) {
    result = s;
    over.Notify();
  });
  over.WaitForNotification();
  return result;
}

StatusOr<stormark::v1::PrepareReply> AgentClient::Prepare(const stormark::v1::PhaseSpec& spec,
                                                          int64_t timeout_nanos) {
  absl::Notification over;
  StatusOr<stormark::v1::PrepareReply> result;
  PrepareAsync(spec, timeout_nanos, [&](StatusOr<stormark::v1::PrepareReply> reply) {
    result = std::move(reply);
    over.Notify();
  });
  over.WaitForNotification();
  return result;
}

void AgentClient::Abort(const std::string& phase_id) {
  absl::Notification over;
  AbortAsync(phase_id, [&] { over.Notify(); });
  over.WaitForNotification();
}

Status AgentClient::Cleanup(const std::string& phase_id, int timeout_ms,
                            std::vector<std::string>* left) {
  absl::Notification over;
  Status result;
  CleanupAsync(phase_id, timeout_ms, [&](const Status& s, std::vector<std::string> names) {
    result = s;
    if (left != nullptr) *left = std::move(names);
    over.Notify();
  });
  over.WaitForNotification();
  return result;
}

}  // namespace stormark::controller
