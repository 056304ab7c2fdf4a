// `stormark run`: connect to the agents (or start a local one), run every phase of the plan
// on all of them at one instant, print a table per phase, record each phase in the results
// database as it finishes, and write the JSON report.
#ifndef STORMARK_CONTROLLER_RUN_RUN_COMMAND_H_
#define STORMARK_CONTROLLER_RUN_RUN_COMMAND_H_

#include <cstdio>

#include "controller/run/interrupts.h"
#include "controller/run/run_options.h"

namespace stormark::controller {

// Exit codes of `stormark run`.
inline constexpr int kExitOk = 0;
inline constexpr int kExitSomeFailed = 1;  // a host or phase failed; others were reported
inline constexpr int kExitBadInput = 2;    // bad flags, plan or database; nothing ran
inline constexpr int kExitInterrupted = 130;

// Runs the command, printing tables on `out` and one-line errors on `err`.
int RunCommand(const RunOptions& options, Interrupts& interrupts, std::FILE* out, std::FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_RUN_COMMAND_H_
