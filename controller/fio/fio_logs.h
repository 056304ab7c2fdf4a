// fio's interval logs of a run: the logs a job file asks for with write_bw_log, write_lat_log
// and write_iops_log (PhasePlan::fio_logs), made from each host's per-interval series after the
// run, so that the scripts fio users plot with read them.
//
//   - One file per log, job and host, named as fio's client mode names the logs it gets from
//     its servers: PREFIX_bw.X.log.HOST (and _iops, _lat, _clat), X being fio's job number in
//     the file and HOST the host's name as the run names it ([A-Za-z0-9._-], anything else
//     '_'). Each clone of a numjobs job has its own file, X, X+1, ..., from its thread's own
//     series (PhaseResult.threads; an agent without them: the clones together in X's file).
//     With per_job_logs=0 the name has no .X, and the jobs that share it share the file, one
//     after another.
//   - Each line is one interval (fio's log_avg_msec, PhaseSpec.series_interval_ms; 1000 ms
//     when the job gives none) of one direction that moved something in it:
//     "TIME, VALUE, DDIR, 0". TIME is the interval's end in ms since the phase's start or,
//     with log_unix_epoch / log_alternate_epoch, in Unix ms on the controller's clock (each
//     host's start corrected by its clock estimate). VALUE is KiB/s (bw), operations per
//     second (iops) or the mean latency in ns (lat; clat repeats it, as stormark times each
//     I/O from its submission). DDIR is 0 read, 1 write, 2 trim; the block size column is 0,
//     as in fio's averaged logs.
//   - fio 3.33 adds a fifth column (the priority class), which Debian's fiologparser.py
//     cannot read; these logs leave it out, as fio's logs before it did.
//
// A phase repeated in the run (repeat, sweeps) gets PREFIX-2, PREFIX-3, ... for its later runs.
#ifndef STORMARK_CONTROLLER_FIO_FIO_LOGS_H_
#define STORMARK_CONTROLLER_FIO_FIO_LOGS_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "controller/run/run_record.h"

namespace stormark::controller::fio {

struct FioLogFile {
  std::string path;
  std::string text;
};

// The log files of `run`, in phase, host and job order. A phase cut to its summaries is read
// back in full (run/full_phase.h); one that cannot be gives no logs, and *read_back (when
// given) gets the first such error.
std::vector<FioLogFile> FioLogs(const RunRecord& run, common::Status* read_back = nullptr);

// Writes FioLogs(run), each atomically; `written` gets the paths written. The first error
// names the file (or the phase that could not be read back); the other files are still
// written.
common::Status WriteFioLogs(const RunRecord& run, std::vector<std::string>* written);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_LOGS_H_
