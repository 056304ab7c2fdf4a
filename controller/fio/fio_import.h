// A fio job file as stormark phases: each of fio's run groups (the jobs between stonewalls)
// becomes one randio phase, run on every host at once through the fleet, the start barrier,
// the results store and the reports, as a plan's randio phases are.
//
// - Every effective option of a job is looked up in fio_option_table.h: mapped to randio's
//   option (with fio's units: kb_base, seconds by default for times), read by the importer
//   (filename, ioengine, buffered, randrepeat, verify, numjobs, ...), ignored with a note, or
//   refused with "FILE:LINE: OPTION: why". A name fio does not know is refused as such.
// - fio's defaults hold where randio's differ: rw=read, bs=4k, ioengine=psync, iodepth=1,
//   randrepeat=1 (a fixed seed unless randseed= is given).
// - filename= names one of the agent's targets, never a path: a path is refused with one line
//   saying how to define a target. A job without filename= runs on the plan's target (the
//   host's, or --target).
// - The jobs of one run group run together. They become one phase with numjobs threads when
//   they are the same job (fio's numjobs clones, or identical sections); jobs that differ
//   and would run at once are refused, naming both, since a phase runs one kind of job.
//   wait_for= makes a phase boundary too (the job runs after the one it names, and after the
//   jobs between, which is stricter than fio).
//
// Pure: reads nothing but its arguments.
#ifndef STORMARK_CONTROLLER_FIO_FIO_IMPORT_H_
#define STORMARK_CONTROLLER_FIO_FIO_IMPORT_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "controller/fio/job_file.h"
#include "controller/plan/plan.h"

namespace stormark::controller::fio {

struct FioImport {
  std::vector<PhasePlan> phases;
  // "job.fio:4: group_reporting: ignored: ...", once per option and reason.
  std::vector<std::string> notes;
  // The pitfalls fio users hit, which the job may not mean: a unit that fio reads otherwise
  // than it reads (KiB under kb_base=1024 is 1000), a queue depth a synchronous engine
  // cannot keep. The phases run as fio would run them.
  std::vector<std::string> warnings;
};

// The phases of `jobs` (ReadJobFile's), in order.
common::StatusOr<FioImport> ImportJobs(const std::vector<FioJob>& jobs);

// Reads the job file at `path` as fio on this machine would ($ncpus, $mb_memory, ${VAR} from
// this process), keeping only `sections` when any are given, and imports it.
common::StatusOr<FioImport> ImportJobFile(const std::string& path,
                                          const std::vector<std::string>& sections);

// The seed randio gets for randrepeat=1 without randseed=: any fixed value gives what fio's
// default promises, the same offsets every run (they are not fio's offsets).
inline constexpr uint64_t kRepeatableSeed = 0x89;

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_IMPORT_H_
