// A run in the layout of fio's `--output-format=json` (and `json+`), so that the tools fio
// users already have read stormark's results: fio_jsonplus_clat2csv, and scripts that read
// `jobs[].read.iops` or `client_stats`. One fio job per phase and host, named after the phase
// (a run group of unlike jobs gives one per job and host, named as in the job file, all with
// the phase's groupid and CPU):
//
//   - `jobs[]` and `client_stats[]` hold the same entries, each with its `hostname`, as fio's
//     client mode gives them (fio's own JSON lacks the host: axboe/fio#515). `client_stats`
//     also holds, per phase, an "All clients" entry computed from the hosts' merged histograms
//     and their common window (first start to last end), which fio gets wrong or leaves out
//     (#1881, #1918).
//   - `read`, `write` and `trim` come from the phase's per-operation figures (randio's and
//     trim's measurements) or, for stream, its direction. `lat_ns` is stormark's latency of
//     one call, submission included; `clat_ns` repeats it, since stormark does not time
//     submission apart, and `slat_ns` is empty (N 0). With `plus`, `clat_ns` and `lat_ns`
//     carry `bins`: the count of each non-empty histogram bucket, keyed by its lower bound in
//     ns (fio's json+).
//   - A phase of a workload with no such split (bonnie, postmark, command) is left out and
//     named under "stormark" -> "omitted".
//
// Pure but for reading back a phase cut to its summaries.
#ifndef STORMARK_CONTROLLER_FIO_FIO_JSON_H_
#define STORMARK_CONTROLLER_FIO_FIO_JSON_H_

#include <string>

#include "common/status.h"
#include "controller/run/run_record.h"
#include "nlohmann/json.hpp"

namespace stormark::controller::fio {

// A phase cut to its summaries is read back in full (run/full_phase.h); one that cannot be
// counts with its summaries, and *read_back (when given) gets the first such error.
nlohmann::json FioJson(const RunRecord& run, bool plus, common::Status* read_back = nullptr);

// Writes FioJson to `path` atomically; a phase that could not be read back is an error after
// the file is written.
common::Status WriteFioJson(const RunRecord& run, const std::string& path, bool plus);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_JSON_H_
