// Rules about what crosses the wire, shared by the controller (which checks a plan before
// anything runs) and the agent (which trusts nothing it receives).
#ifndef STORMARK_COMMON_SPEC_CHECK_H_
#define STORMARK_COMMON_SPEC_CHECK_H_

#include <string_view>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// gRPC message limits, set on both ends: requests (a phase spec, a command line) are small,
// and an agent refuses a bigger one before parsing it; replies carry histograms and series.
inline constexpr int kMaxRequestBytes = 1 << 20;
inline constexpr int kMaxReplyBytes = 64 << 20;

// The name of the workload a phase spec holds: the name of the set field of its `workload`
// oneof ("stream", "bonnie"), or "" when none is set.
std::string_view WorkloadName(const stormark::v1::PhaseSpec& spec);

// True for names that may cross the wire (targets, phases, files): [A-Za-z0-9._-], 1 to 64
// characters, not "." or "..". Such a name can never climb out of a directory.
bool IsValidName(std::string_view name);

// OK when `name` IsValidName; otherwise InvalidArgument, one line naming `what` ("phase id")
// and the name as LogSafe renders it (escaped and cut short), so it can be logged and
// returned whatever the caller sent.
Status CheckName(std::string_view what, std::string_view name);

// The largest block any workload moves in one request (stream and randio bs, bonnie chunk,
// postmark block sizes).
inline constexpr uint32_t kMaxBlockSize = 64u << 20;

// The shortest interval of a result's series (PhaseSpec.series_interval_ms).
inline constexpr uint32_t kMinSeriesIntervalMs = 100;

// True for the block-queue settings a phase may tune (PhaseSpec.tuning): scheduler,
// read_ahead_kb, nr_requests, queue_depth.
bool IsTuningKnob(std::string_view name);
inline constexpr char kTuningKnobNames[] = "scheduler, read_ahead_kb, nr_requests, queue_depth";

}  // namespace stormark::common

#endif  // STORMARK_COMMON_SPEC_CHECK_H_
