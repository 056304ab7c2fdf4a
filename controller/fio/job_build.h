// The second half of reading a job file (job_file.h): turning its sections, as read, into the
// jobs fio makes of them, as init.c add_job does. For each job section, in order: its
// effective options (the global options above it, then its own, last one wins), their values
// evaluated (job_values.h EvaluateValue, under the job's kb_base), its name, its numjobs
// clones, its run and reporting groups, and its wait_for, checked against the jobs above it.
// The rules are spelled out in job_file.h. A pure function; thread-safe.
#ifndef STORMARK_CONTROLLER_FIO_JOB_BUILD_H_
#define STORMARK_CONTROLLER_FIO_JOB_BUILD_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "controller/fio/job_file.h"

namespace stormark::controller::fio {

// One [section] as the reader found it.
struct JobSection {
  std::string name;
  std::string file;
  int line = 0;
  bool global = false;   // its name starts with "global"
  bool skipped = false;  // a job that ReadOptions.sections leaves out; its lines were not read
  std::vector<JobOption> options;  // in file order, substituted but not yet evaluated
};

// The bytes a JobOption is counted as against kMaxExpandedBytes.
size_t JobOptionCost(const JobOption& option);

// The jobs of `sections`. `file_name` names the job file in errors about the file as a whole;
// `budget` is what is left of kMaxExpandedBytes for the jobs' options.
common::StatusOr<std::vector<FioJob>> BuildJobs(const std::vector<JobSection>& sections,
                                                const ReadOptions& options,
                                                std::string_view file_name, size_t budget);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_JOB_BUILD_H_
