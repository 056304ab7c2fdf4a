// The JSON report of a run (--json FILE): every figure, with the host named in every
// record. Schema "stormark.run/1"; fields are only ever added within a schema version.
#ifndef STORMARK_CONTROLLER_REPORT_REPORT_JSON_H_
#define STORMARK_CONTROLLER_REPORT_REPORT_JSON_H_

#include <string>

#include "common/status.h"
#include "controller/run/run_record.h"
#include "common/atomic_file.h"
#include "nlohmann/json.hpp"

namespace stormark::controller {

inline constexpr char kJsonSchema[] = "stormark.run/1";

// The report as one tree (for tests and small runs).
nlohmann::json RunToJson(const RunRecord& run);
// The report's text, exactly RunToJson(run).dump(2) and a newline, built one host's row at a
// time, so that a large fleet's report is never held as one tree. A phase cut to its summaries
// is read back in full (run/full_phase.h); one that cannot be is written with its summaries,
// and *read_back (when given) gets the first such error.
std::string RunJsonText(const RunRecord& run, common::Status* read_back = nullptr);
// The same text handed to `put` in pieces of about a megabyte.
void PutRunJson(const RunRecord& run, const common::PieceFn& put,
                common::Status* read_back = nullptr);

// Writes the report to `path` atomically (a temporary file renamed into place), so a crash
// never leaves a half-written report. A phase that could not be read back in full is an error
// too, after the report is written with its summaries.
common::Status WriteJsonReport(const RunRecord& run, const std::string& path);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_REPORT_JSON_H_
