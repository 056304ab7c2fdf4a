// The Run stream of a phase: progress as it comes, the result at its end, and for an agent
// that arms runs (protocol 1.3), the update that says it waits for its Start.
#include "controller/fleet/agent_client.h"

#include "absl/synchronization/notification.h"

#include "common/strings.h"
#include "common/version.h"
#include "controller/fleet/result_check.h"

namespace stormark::controller {

using common::Status;
using common::StatusOr;
using common::StrCat;

// One Run stream: progress as it comes, the result at its end. Deletes itself when the stream
// is over, after its context (and that context's reference to the channel) is gone.
class AgentClient::RunCall final : public grpc::ClientReadReactor<stormark::v1::RunUpdate> {
 public:
  RunCall(AgentClient& client, stormark::v1::RunRequest request, ArmedFn on_armed,
          ProgressFn on_progress, ResultFn done)
      : live_(client),
        client_(client),
        request_(std::move(request)),
        on_armed_(std::move(on_armed)),
        on_progress_(std::move(on_progress)),
        done_(std::move(done)) {}

  void Start() {
    opened_nanos_ = client_.clock_.MonotonicNanos();
    client_.Track(&context_);
    client_.stub_->async()->Run(&context_, &request_, this);
    StartRead(&update_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // The stream is over; OnDone follows.
    if (update_.has_armed() && on_armed_) on_armed_();
    if (update_.has_progress()) {
      // A figure no run can send ends the stream here, before the deadline or display use it.
      if (Status s =
              CheckProgress(update_.progress(), client_.clock_.MonotonicNanos() - opened_nanos_);
          !s.ok()) {
        implausible_ = StrCat("the agent's progress is not plausible: ", s.message());
        context_.TryCancel();
        return;  // No further read: OnDone follows the cancel.
      }
      if (on_progress_) on_progress_(update_.progress());
    }
    if (update_.has_result()) result_ = std::move(*update_.mutable_result());
    StartRead(&update_);
  }

  void OnDone(const grpc::Status& status) override {
    client_.Untrack(&context_);
    StatusOr<stormark::v1::PhaseResult> outcome = Outcome(status);
    ResultFn done = std::move(done_);
    delete this;
    done(std::move(outcome));
  }

 private:
  StatusOr<stormark::v1::PhaseResult> Outcome(const grpc::Status& status) {
    if (!implausible_.empty()) {
      return absl::DataLossError(StrCat("host ", client_.host_, ": ", implausible_));
    }
    if (!status.ok()) {
      if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
          status.error_code() == grpc::StatusCode::INTERNAL) {
        return absl::UnavailableError(StrCat("host ", client_.host_,
                                             ": lost the agent during the phase (",
                                             status.error_message(), ")"));
      }
      return client_.FromGrpc(status, "Run");
    }
    if (!result_) {
      return absl::DataLossError(
          StrCat("host ", client_.host_, ": the agent ended the phase without a result"));
    }
    // A figure no run can produce fails the host here, before any sum or table takes it.
    if (Status s = CheckResult(*result_, client_.clock_.MonotonicNanos() - opened_nanos_);
        !s.ok()) {
      return absl::DataLossError(
          StrCat("host ", client_.host_, ": the agent's result is not plausible: ", s.message()));
    }
    return std::move(*result_);
  }

  LiveCall live_;  // First: goes after the context.
  AgentClient& client_;
  grpc::ClientContext context_;
  const stormark::v1::RunRequest request_;
  stormark::v1::RunUpdate update_;
  std::optional<stormark::v1::PhaseResult> result_;
  int64_t opened_nanos_ = 0;  // When the stream opened, on the controller's monotonic clock.
  std::string implausible_;   // Why a progress was refused; the stream was cancelled for it.
  const ArmedFn on_armed_;
  const ProgressFn on_progress_;
  ResultFn done_;
};

void AgentClient::RunAsync(const std::string& phase_id, int64_t start_at_controller_nanos,
                           ProgressFn on_progress, ResultFn done) {
  stormark::v1::RunRequest request;
  request.set_phase_id(phase_id);
  request.set_phase_token(TokenFor(phase_id));
  request.set_start_at_unix_nanos(start_at_controller_nanos + estimate_.offset_nanos);
  (new RunCall(*this, std::move(request), nullptr, std::move(on_progress), std::move(done)))
      ->Start();
}

bool AgentClient::arms_runs() const { return info_.protocol().minor() >= common::kArmedStartMinor; }

void AgentClient::ArmAsync(const std::string& phase_id, ArmedFn on_armed, ProgressFn on_progress,
                           ResultFn done) {
  stormark::v1::RunRequest request;
  request.set_phase_id(phase_id);
  request.set_phase_token(TokenFor(phase_id));
  request.set_await_start(true);
  (new RunCall(*this, std::move(request), std::move(on_armed), std::move(on_progress),
               std::move(done)))
      ->Start();
}

StatusOr<stormark::v1::PhaseResult> AgentClient::Run(const std::string& phase_id,
                                                     int64_t start_at_controller_nanos,
                                                     const ProgressFn& on_progress) {
  absl::Notification over;
  StatusOr<stormark::v1::PhaseResult> result;
  RunAsync(phase_id, start_at_controller_nanos, on_progress,
           [&](StatusOr<stormark::v1::PhaseResult> got) {
             result = std::move(got);
             over.Notify();
           });
  over.WaitForNotification();
  return result;
}

}  // namespace stormark::controller
