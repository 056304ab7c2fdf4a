#include "controller/results/export_command.h"

#include "common/atomic_file.h"
#include "common/strings.h"
#include "controller/fio/fio_json.h"
#include "controller/report/pushgateway.h"
#include "controller/report/report_export.h"
#include "controller/report/report_json.h"
#include "controller/results/results_query.h"

namespace stormark::controller {
namespace {

constexpr int kExitPushFailed = 1;
constexpr int kExitBadInput = 2;

int Fail(const common::Status& status, std::FILE* err, int code = kExitBadInput) {
  std::fprintf(err, "stormark: %s\n", std::string(status.message()).c_str());
  return code;
}

}  // namespace

int ExportCommand(const ExportOptions& options, const std::string& ref, std::FILE* out,
                  std::FILE* err) {
  const std::string& format = options.format;
  if (!options.push.empty() && format != "prometheus") {
    return Fail(absl::InvalidArgumentError("--push: only with --format prometheus"), err);
  }
  std::string push_url;
  if (!options.push.empty()) {
    auto url = PushgatewayGroupUrl(options.push);
    if (!url.ok()) return Fail(url.status(), err);
    push_url = std::move(*url);
  }
  auto store = OpenResultsForReading(options.db_path, err);
  if (!store.ok()) return Fail(store.status(), err);
  auto run = LoadNamedRun(**store, ref);
  if (!run.ok()) return Fail(run.status(), err);

  if (format == "json") {
    // One host's row at a time, as `stormark run --json` writes it: a large fleet's run is
    // never held as one document.
    if (options.output.empty()) {
      PutRunJson(run->record, [out](std::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), out);
      });
      return 0;
    }
    const common::Status written = common::WriteFileAtomically(
        options.output, [&](const common::PieceFn& put) { PutRunJson(run->record, put); });
    return written.ok() ? 0 : Fail(common::Annotate(written, "-o"), err);
  }
  std::string text;
  if (format == "csv") {
    text = RunCsv(run->record);
  } else if (format == "bonnie-csv") {
    text = RunBonnieCsv(run->record);
    if (text.empty()) {
      return Fail(absl::NotFoundError(common::StrCat("run ", run->listing.run_id,
                                                     " has no bonnie phase that succeeded")),
                  err);
    }
  } else if (format == "prometheus") {
    text = RunPrometheus(run->record, run->listing.label);
  } else if (format == "fio-json" || format == "fio-json-plus") {
    text = fio::FioJson(run->record, format == "fio-json-plus")
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
  } else {
    return Fail(absl::InvalidArgumentError(common::StrCat(
                    "--format '", format,
                    "': expected json, csv, bonnie-csv, prometheus, fio-json or fio-json-plus")),
                err);
  }

  if (!options.output.empty()) {
    const common::Status written = common::WriteFileAtomically(options.output, text);
    if (!written.ok()) return Fail(common::Annotate(written, "-o"), err);
  } else if (push_url.empty()) {
    std::fputs(text.c_str(), out);
  }
  if (!push_url.empty()) {
    const common::Status pushed = PushMetrics(push_url, text);
    if (!pushed.ok()) return Fail(pushed, err, kExitPushFailed);
    std::fprintf(out, "pushed %s to %s\n", run->listing.run_id.c_str(), push_url.c_str());
  }
  return 0;
}

}  // namespace stormark::controller
