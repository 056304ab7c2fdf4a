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
// - One file can differ by host (axboe/fio#1688): ${STORMARK_HOST} is the host's name as the
//   run names it, and ${STORMARK_LABEL_<KEY>} each of its labels. Such a file is read once per
//   host (fio_hosts.h); every host must get the same phases, each with its own values.
//
// Pure: reads nothing but its arguments.
#ifndef STORMARK_CONTROLLER_FIO_FIO_IMPORT_H_
#define STORMARK_CONTROLLER_FIO_FIO_IMPORT_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "controller/fio/job_file.h"
#include "controller/plan/plan.h"

namespace stormark::controller::fio {

// A host a job file is read for: its name and labels, as the plan gives them, and the facts of
// its target once its agent has been reached (TargetFacts).
struct FioHost {
  std::string name = "local";
  std::vector<std::pair<std::string, std::string>> labels;
  std::map<std::string, std::string> target;
};

// The variables a job file sees for `host`: STORMARK_HOST, STORMARK_LABEL_<KEY> per label (KEY
// upper-cased with anything but letters and digits as '_': rack-row is
// STORMARK_LABEL_RACK_ROW), and STORMARK_TARGET_<FACT> for each of kTargetFacts, from
// host.target. A fact not known (before the agents are reached, or one the target lacks)
// reads as a value every check accepts: SIZE 1073741824 (1 GiB), SIZE_MIB 1024, BLOCK_SIZE
// 4096, "unknown".
std::map<std::string, std::string> HostVariables(const FioHost& host);

// The target facts a job file can read: STORMARK_TARGET_NAME, _KIND ("block", "dir", ...),
// _SIZE (bytes a workload may address: a block target's size, a dir target's free bytes) and
// _SIZE_MIB (the same in whole MiB, for fio's arithmetic, whose numbers must fit 32 bits:
// size=(${STORMARK_TARGET_SIZE_MIB}/4)m), _BLOCK_SIZE (logical), _MODEL and _TRANSPORT
// ("local", "AoE", ...).
inline constexpr const char* kTargetFacts[] = {"NAME",       "KIND",  "SIZE",     "SIZE_MIB",
                                               "BLOCK_SIZE", "MODEL", "TRANSPORT"};
std::map<std::string, std::string> TargetFacts(const stormark::v1::TargetInfo& info);

struct FioImport {
  std::vector<PhasePlan> phases;
  // The phases depend on the host's variables (${STORMARK_HOST}, its labels): each host must
  // read the file for itself (fio_hosts.h).
  bool per_host = false;
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
// this process), with `host`'s variables, keeping only `sections` when any are given, and
// imports it.
common::StatusOr<FioImport> ImportJobFile(const std::string& path,
                                          const std::vector<std::string>& sections,
                                          const FioHost& host = {});

// When `imported` depends on the host (per_host), gives each phase its fio_origin: `path`,
// `sections`, its place and name in the file and what this reading made of it, so that
// ResolveHostSpecs (fio_hosts.h) can read the file again for each host.
void KeepOrigins(const std::string& path, const std::vector<std::string>& sections,
                 FioImport* imported);

// The seed randio gets for randrepeat=1 without randseed=: any fixed value gives what fio's
// default promises, the same offsets every run (they are not fio's offsets).
inline constexpr uint64_t kRepeatableSeed = 0x89;

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_IMPORT_H_
