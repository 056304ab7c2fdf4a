// Reads a fio job file into the jobs fio would create from it, with each job's effective
// options and its place in fio's run and reporting groups. It follows fio's grammar as
// init.c (__parse_jobs_ini, add_job), parse.c and options.c implement it, which is at times
// stricter or odder than fio's HOWTO ("Job file format"):
//
// - Lines: blank; a comment, whose first non-blank character is ';' or '#'; a "[name]"
//   header; "include FILE"; "key=value"; or "key" alone (a flag). fio cuts every line at its
//   first ';' or '#', so a trailing comment goes, and a value cannot hold either character.
//   There is no quoting. Blanks before '=' are dropped; a blank after it is an error, because
//   fio keeps it and then ignores the unit or rejects the value ("bs = 4k" is 4 bytes).
// - Sections: a name starting with "global" ([global], [global-2]) is a global section; its
//   options apply to the jobs below it only. Any other section is a job. An option before
//   the first section is an error (fio: "option outside of [] job section"), and so are
//   "[]", "[job" and names over 255 characters, which fio empties or cuts. A file without a
//   job is an error (fio: "No job(s) defined").
// - include FILE: its lines join the section it is in. FILE is relative to the directory of
//   the file that includes it (fio tries the current directory first). An included file may
//   include others but may not hold a section. Loops and depth are refused.
// - Values: ${NAME}, $ncpus, $mb_memory, $pagesize and arithmetic, as job_values.h says.
//   An unset ${NAME} is an error unless ReadOptions.unset_variables_are_empty.
// - Effective options, in order: the global options above the job, then its own. When a
//   name repeats, only the last one stays, at the place of that last occurrence (the order
//   in which fio set the final values). Names compare exactly; an alias (timeout for
//   runtime) is another name here. A global "name=" is dropped: fio names each job after its
//   section unless the job's own section sets name=.
// - numjobs=N makes N jobs with the same name and options, clone 0..N-1 (fio parses N as a
//   size, so 4k is 4096). fio's limit of 4096 jobs (REAL_MAX_JOBS) holds for the whole file;
//   numjobs=0, which makes fio create jobs until that limit, is an error.
// - Groups: all jobs run together in one group unless separated. A job with stonewall
//   (alias wait_for_previous; stonewall=0 clears it) waits until every job before it has
//   finished, starting run_group + 1. stonewall or new_group starts a new reporting group;
//   new_group does not wait. Either applies only if some job came before, and a job's clones
//   stay in its groups. wait_for=NAME delays the job until the earlier job named NAME
//   finishes; NAME must name exactly one job above it, other than itself.
// - ReadOptions.sections (fio's --section): only those jobs are read; global sections are
//   always read; the other jobs' lines are skipped unread, as fio skips them. A name that
//   is not a job's section is an error that lists the jobs.
//
// Errors are one line, "FILE:LINE: what" ("job.fio:7: include loop: job.fio includes
// itself"), or "FILE: what" for the file as a whole. Input is bounded: a file over 1 MiB, a
// line over fio's 8191 characters, includes nested 16 files deep or reading over 16 MiB in
// all, over 4096 jobs, or over 64 MiB of options in the jobs is an error. Nothing is thrown.
// The functions are thread-safe; they read only the job file and the files it includes.
#ifndef STORMARK_CONTROLLER_FIO_JOB_FILE_H_
#define STORMARK_CONTROLLER_FIO_JOB_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "controller/fio/job_values.h"

namespace stormark::controller::fio {

inline constexpr size_t kMaxJobFileBytes = 1 << 20;    // per file
inline constexpr int kMaxIncludeDepth = 16;            // files open at once, the top included
inline constexpr int kMaxJobs = 4096;                  // fio's REAL_MAX_JOBS, clones included
inline constexpr size_t kMaxReadBytes = 16 << 20;      // all included files together
inline constexpr size_t kMaxExpandedBytes = 64 << 20;  // all jobs' options together

struct JobOption {
  std::string name;
  std::string value;       // substituted and evaluated; empty for a flag
  bool has_value = false;  // "key=value" (even "key="), not "key"
  std::string file;        // where the line is: the job file or an included file
  int line = 0;
};

struct FioJob {
  std::string name;     // fio's job name: the section's, or its own name= option
  std::string section;  // the [section] header's name
  std::string file;     // where the header is
  int line = 0;
  std::vector<JobOption> options;  // effective options; see the top of this file
  int clone = 0;                   // 0..numjobs-1
  int run_group = 0;               // jobs with the same run_group start together
  int reporting_group = 0;         // fio's groupid, which group_reporting sums over
  std::string wait_for;            // the job this one waits for, or empty
};

struct ReadOptions {
  std::vector<std::string> sections;       // fio's --section: only these jobs, if any given
  bool unset_variables_are_empty = false;  // fio's own behaviour for an unset ${NAME}
};

// Reads the job file at `path`; relative includes resolve against its directory.
common::StatusOr<std::vector<FioJob>> ReadJobFile(const std::string& path,
                                                  const JobFileFacts& facts,
                                                  const ReadOptions& options = {});

// Reads job file text. `file_name` names it in errors and, joined to `base_dir`, identifies
// it for include loops; relative includes resolve against `base_dir` ("" is the current
// directory).
common::StatusOr<std::vector<FioJob>> ParseJobText(std::string_view text,
                                                   const std::string& file_name,
                                                   const JobFileFacts& facts,
                                                   const ReadOptions& options = {},
                                                   const std::string& base_dir = "");

// True if the first line that is not blank or a comment is a "[section]" header: cheap, for
// a CLI that wants to tell a user "this looks like a fio job file: run it with --fio".
bool LooksLikeJobFile(std::string_view text);

// The job's effective option `name`, or nullptr.
const JobOption* FindOption(const FioJob& job, std::string_view name);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_JOB_FILE_H_
