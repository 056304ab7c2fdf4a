// Finding the program a command rule names, the way execvp would, so that the agent's
// command policy judges the file that will really run. Used when the config is read, on
// names the config gives; never on a name from a request (see agent/config/command_policy.h).
#ifndef STORMARK_AGENT_CONFIG_EXECUTABLES_H_
#define STORMARK_AGENT_CONFIG_EXECUTABLES_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::agent {

// The real path (symlinks resolved) of the executable `name` names: `name` itself when it
// holds a '/', else the first match in $PATH (or /usr/local/bin:/usr/bin:/bin without one).
// NOT_FOUND names the program; FAILED_PRECONDITION when the file is not executable.
common::StatusOr<std::string> FindExecutable(std::string_view name);

// As FindExecutable, and `*found` is set to the path before symlinks were resolved (`name`
// itself, or <PATH entry>/<name>).
common::StatusOr<std::string> FindExecutable(std::string_view name, std::string* found);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_CONFIG_EXECUTABLES_H_
