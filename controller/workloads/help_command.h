// `stormark help workload [NAME] [--markdown]`: a workload's options as its option table
// declares them (option_table.h), for a terminal or as docs/workloads/NAME-options.md.
#ifndef STORMARK_CONTROLLER_WORKLOADS_HELP_COMMAND_H_
#define STORMARK_CONTROLLER_WORKLOADS_HELP_COMMAND_H_

#include <cstdio>
#include <string>

namespace stormark::controller {

// Prints the options of the workload `name` to `out` (Markdown with `markdown`), or, with an
// empty `name`, the workloads there are. Returns the exit code: 0, or 2 with one line on `err`
// for an unknown workload.
int HelpWorkloadCommand(const std::string& name, bool markdown, FILE* out, FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_HELP_COMMAND_H_
