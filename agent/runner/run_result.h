// A finished run's result: the figures its jobs recorded, merged, and what became of it
// (succeeded, aborted and why, failed and why), with the warning a run too short to time
// honestly earns.
#ifndef STORMARK_AGENT_RUNNER_RUN_RESULT_H_
#define STORMARK_AGENT_RUNNER_RUN_RESULT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/recorder.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// A run that finished in less than this gets "too fast to time".
inline constexpr int64_t kTooFastNanos = 500'000'000;

// Sets the figures (bytes, ops, elapsed time, latency, per-second series) of `recorders` over
// [start_mono, end_mono], and the state from `status`: SUCCEEDED; ABORTED when the workload
// was cancelled (`cancelled`, or a CANCELLED status), with `abort_reason` as the error when
// there is one; FAILED otherwise, with the status's message. A run too fast to time is told
// `too_fast_hint`, what would make it longer ("use a longer runtime" for a time-based phase).
void FillRunResult(const common::Status& status, bool cancelled, const std::string& abort_reason,
                   const common::RecorderSet& recorders, int64_t start_mono, int64_t end_mono,
                   stormark::v1::PhaseResult* result,
                   std::string_view too_fast_hint = "use a larger size");

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RUNNER_RUN_RESULT_H_
