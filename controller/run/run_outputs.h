// What `stormark run` writes after its phases: the baseline comparison (--baseline), the
// JSON report (--json), the bonnie++ CSV lines (--csv), and where the results database keeps
// the run.
#ifndef STORMARK_CONTROLLER_RUN_RUN_OUTPUTS_H_
#define STORMARK_CONTROLLER_RUN_RUN_OUTPUTS_H_

#include <cstdio>

#include "controller/results/run_journal.h"
#include "controller/run/run_options.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

// Prints the baseline tables and the "JSON report:", "bonnie++ CSV:" and "Results:" lines on
// `out`, and a file that cannot be written on `err`. Returns `code`, the run's exit code so
// far, or kExitSomeFailed (run_command.h) instead of kExitOk when a file could not be
// written or the results database was asked for but did not keep the run.
int WriteRunOutputs(const RunOptions& options, const RunRecord& run, const RunJournal& journal,
                    int code, std::FILE* out, std::FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_RUN_OUTPUTS_H_
