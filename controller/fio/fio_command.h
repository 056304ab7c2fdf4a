// The fio commands: `stormark fio --check JOBFILE` prints the phases a job file makes and
// their effective parameters, with the notes and the pitfalls fio users hit; `stormark help
// fio` prints every fio option and what a job file's use of it does (fio_option_table.h),
// as text or as the Markdown table of docs/workloads/fio-options.md.
#ifndef STORMARK_CONTROLLER_FIO_FIO_COMMAND_H_
#define STORMARK_CONTROLLER_FIO_FIO_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace stormark::controller::fio {

struct FioCheckOptions {
  std::string path;                   // the job file
  std::vector<std::string> sections;  // --section: only these jobs
};

// Returns the exit code: 0, or 2 with one line on `err` for a job file that cannot run.
int FioCheckCommand(const FioCheckOptions& options, FILE* out, FILE* err);

// Returns 0.
int HelpFioCommand(bool markdown, FILE* out);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_COMMAND_H_
