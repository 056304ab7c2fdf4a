#include "agent/runner/run_result.h"

#include <memory>

#include "fmt/format.h"

namespace stormark::agent {

using stormark::v1::PhaseResult;

void FillRunResult(const common::Status& status, bool cancelled, const std::string& abort_reason,
                   const common::RecorderSet& recorders, int64_t start_mono, int64_t end_mono,
                   PhaseResult* result, std::string_view too_fast_hint) {
  const int64_t elapsed = end_mono - start_mono;
  std::unique_ptr<common::Recorder> merged = recorders.Merged();
  result->set_bytes(merged->bytes());
  result->set_ops(merged->ops());
  result->set_elapsed_nanos(elapsed);
  merged->latency().ToProto(result->mutable_latency());
  merged->SeriesToProto(end_mono, result->mutable_series());
  if (status.ok()) {
    result->set_state(PhaseResult::SUCCEEDED);
    if (elapsed < kTooFastNanos) {
      result->add_warnings(fmt::format("too fast to time: finished in {:.3f} s (under 0.5 s); {}",
                                       static_cast<double>(elapsed) / 1e9, too_fast_hint));
    }
  } else if (absl::IsCancelled(status) || cancelled) {
    result->set_state(PhaseResult::ABORTED);
    result->set_error(abort_reason.empty() ? std::string(status.message()) : abort_reason);
  } else {
    result->set_state(PhaseResult::FAILED);
    result->set_error(std::string(status.message()));
  }
}

}  // namespace stormark::agent
