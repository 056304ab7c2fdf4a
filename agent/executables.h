// Finding the program a command names, the way execvp would, so that the agent's command
// policy judges the file that will really run.
#ifndef STORMARK_AGENT_EXECUTABLES_H_
#define STORMARK_AGENT_EXECUTABLES_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::agent {

// The real path (symlinks resolved) of the executable `name` names: `name` itself when it
// holds a '/', else the first match in $PATH (or /usr/local/bin:/usr/bin:/bin without one).
// NOT_FOUND names the program; FAILED_PRECONDITION when the file is not executable.
common::StatusOr<std::string> FindExecutable(std::string_view name);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_EXECUTABLES_H_
