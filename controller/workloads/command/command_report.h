// The table of a command phase: per host, the wall time (with the sync inside it), the CPU
// the command used, and how it ended. A host whose command failed shows no time at all.
#ifndef STORMARK_CONTROLLER_WORKLOADS_COMMAND_COMMAND_REPORT_H_
#define STORMARK_CONTROLLER_WORKLOADS_COMMAND_COMMAND_REPORT_H_

#include <string>

#include "controller/fleet.h"
#include "controller/summary.h"

namespace stormark::controller {

// Pure; ends in a newline.
std::string CommandTable(const PhaseOutcome& outcome, const PhaseSummary& summary);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_COMMAND_COMMAND_REPORT_H_
