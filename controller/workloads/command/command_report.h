// The table of a command phase: per host, the wall time (with the sync inside it), the CPU
// the command used, and how it ended. A host whose command failed shows no time at all.
#ifndef STORMARK_CONTROLLER_WORKLOADS_COMMAND_COMMAND_REPORT_H_
#define STORMARK_CONTROLLER_WORKLOADS_COMMAND_COMMAND_REPORT_H_

#include <optional>
#include <string>

#include "controller/fleet/fleet.h"
#include "controller/report/summary.h"

namespace stormark::controller {

// Pure; ends in a newline.
// The command's wall time in seconds, the figure sweep tables and charts show for it; nullopt
// when the result has no "command" measurement.
std::optional<double> CommandSeconds(const stormark::v1::PhaseResult& result);

std::string CommandTable(const PhaseOutcome& outcome, const PhaseSummary& summary);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_COMMAND_COMMAND_REPORT_H_
