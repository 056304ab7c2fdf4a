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

// The largest block a stream phase may use.
inline constexpr uint32_t kMaxStreamBlockSize = 64u << 20;

// The first problem with a stream spec, as one line ("stream: size 10M is not a multiple of
// bs 3k"), or OK.
Status CheckStreamSpec(const stormark::v1::StreamSpec& spec);

// Limits of a bonnie spec: seeker threads, and bonnie++'s own limit on directories.
inline constexpr uint32_t kMaxBonnieSeekers = 1024;
inline constexpr uint32_t kMaxBonnieFileDirs = 99999;

// The first problem with a bonnie spec, as one line naming the field, or OK.
Status CheckBonnieSpec(const stormark::v1::BonnieSpec& spec);

// True for the block-queue settings a phase may tune (PhaseSpec.tuning): scheduler,
// read_ahead_kb, nr_requests, queue_depth.
bool IsTuningKnob(std::string_view name);
inline constexpr char kTuningKnobNames[] = "scheduler, read_ahead_kb, nr_requests, queue_depth";

// Limits of a command spec: arguments and their total size.
inline constexpr int kMaxCommandArgs = 4096;
inline constexpr size_t kMaxCommandBytes = 128 * 1024;

// The first problem with a command spec (neither or both of argv and shell, too long), or OK.
Status CheckCommandSpec(const stormark::v1::CommandSpec& spec);

// Limits of a postmark spec. PostMark keeps a table of 2 x number files in memory and a
// buffer of max size bytes; the agent does the same, so both are bounded.
inline constexpr uint32_t kMaxPostmarkFiles = 10'000'000;
inline constexpr uint64_t kMaxPostmarkFileSize = 256ull << 20;
inline constexpr uint32_t kMaxPostmarkSubdirectories = 100'000;
inline constexpr uint32_t kMaxPostmarkSeed = 2147483647;  // PostMark's seed is a C int.

// PostMark 1.5's defaults, which a postmark spec's fields left at 0 (or unset) stand for.
inline constexpr uint32_t kPostmarkNumber = 500;
inline constexpr uint64_t kPostmarkMinSize = 500;
inline constexpr uint64_t kPostmarkMaxSize = 10000;
inline constexpr uint32_t kPostmarkTransactions = 500;
inline constexpr uint32_t kPostmarkBlockSize = 512;
inline constexpr int32_t kPostmarkBias = 5;
inline constexpr uint32_t kPostmarkSeed = 42;

// `spec` with every field left at 0 (or unset) set to PostMark's default (the report
// VERBOSE).
stormark::v1::PostmarkSpec WithPostmarkDefaults(stormark::v1::PostmarkSpec spec);

// The first problem with a postmark spec, as one line naming PostMark's setting, or OK.
Status CheckPostmarkSpec(const stormark::v1::PostmarkSpec& spec);

// Limits of a randio spec.
inline constexpr uint32_t kMaxRandioIodepth = 4096;
inline constexpr uint32_t kMaxRandioJobs = 256;

// The first problem with a randio spec, as one line naming the parameter (with fio's name),
// or OK. Checks what can be known without the target; the agent checks the rest (alignment,
// the device's size) when it prepares the phase.
Status CheckRandioSpec(const stormark::v1::RandioSpec& spec);

// True when a randio spec writes to its target (its pattern writes, or verify lays out data).
bool RandioWrites(const stormark::v1::RandioSpec& spec);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_SPEC_CHECK_H_
