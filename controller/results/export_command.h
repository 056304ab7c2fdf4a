// `stormark results export RUN --format json|csv|bonnie-csv|prometheus [-o FILE] [--push URL]`:
// a recorded run in a format other tools read (report_json.h, report_export.h). Written to
// FILE (atomically), or to standard output; the Prometheus format can also be pushed to a
// Pushgateway (pushgateway.h). Bad input is one "stormark: ..." line and exit code 2; a push
// that fails is exit code 1.
#ifndef STORMARK_CONTROLLER_RESULTS_EXPORT_COMMAND_H_
#define STORMARK_CONTROLLER_RESULTS_EXPORT_COMMAND_H_

#include <cstdio>
#include <string>

namespace stormark::controller {

struct ExportOptions {
  // --db PATH; empty means DefaultResultsPath().
  std::string db_path;
  // json, csv, bonnie-csv or prometheus.
  std::string format;
  // -o FILE; empty: standard output (unless pushing).
  std::string output;
  // --push URL: a Pushgateway (prometheus only).
  std::string push;
};

// The formats, as --format takes them.
inline constexpr const char* kExportFormats[] = {"json",       "csv",      "bonnie-csv",
                                                 "prometheus", "fio-json", "fio-json-plus"};

int ExportCommand(const ExportOptions& options, const std::string& run, std::FILE* out,
                  std::FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_EXPORT_COMMAND_H_
