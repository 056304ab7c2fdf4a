// What became of a run as a whole, the same in every view (the live output, `results show`,
// JSON and the results database): complete, partial with its reasons, interrupted, or failed.
#ifndef STORMARK_CONTROLLER_REPORT_RUN_STATUS_H_
#define STORMARK_CONTROLLER_REPORT_RUN_STATUS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/run/run_record.h"

namespace stormark::controller {

struct RunStatus {
  // "complete": every host did every phase. "partial": some figures are missing, for the
  // reasons given. "interrupted": the user stopped it. "failed": no phase succeeded on any
  // host.
  std::string status;
  // One line each, in run order: an agent that took no part and why, a host that failed a
  // phase ("phase seq-write [bs=4k]: db2 failed": why is in the phase's table), a hook that
  // failed and why, a sweep point skipped, --fail-fast; the first kMaxReasons of them, then
  // "... and N more".
  std::vector<std::string> reasons;
};

inline constexpr size_t kMaxReasons = 20;

RunStatus StatusOf(const RunRecord& run);

// "status: partial (2 reasons)\n  - ...\n", for the end of the output and `results show`.
std::string FormatRunStatus(const RunStatus& status);

// How long a teardown hook may run once the run was interrupted or stopped.
inline constexpr int64_t kTeardownAfterHaltNanos = 60'000'000'000;

// The line a hook prints: "  setup `mkfs ...`: ok on 2 hosts (longest 1.2 s)", or FAILED with
// a line per host that failed; a teardown after an interrupt says so ("`umount ...` after the
// interrupt (at most 60.0 s): ok ...").
std::string FormatHookLine(const HookOutcome& hook);

// What a skipped point prints in place of its phases.
std::string FormatSkippedPoint(const SkippedPoint& point);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_RUN_STATUS_H_
