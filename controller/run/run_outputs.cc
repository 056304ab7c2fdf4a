#include "controller/run/run_outputs.h"

#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/status.h"
#include "controller/fio/fio_json.h"
#include "controller/fio/fio_logs.h"
#include "controller/report/host_groups.h"
#include "controller/report/report_baseline.h"
#include "controller/report/report_export.h"
#include "controller/report/report_json.h"
#include "controller/run/run_command.h"

namespace stormark::controller {
namespace {

using common::Status;

// One bonnie++ CSV line per host that finished a bonnie phase, for bon_csv2html and friends.
Status WriteBonnieCsv(const RunRecord& run, const std::string& path) {
  Status read_back;
  const std::string text = RunBonnieCsv(run, &read_back);
  RETURN_IF_ERROR(common::Annotate(common::WriteFileAtomically(path, text), "--csv"));
  return common::Annotate(read_back, "--csv: written without the hosts of a phase");
}

}  // namespace

int WriteRunOutputs(const RunOptions& options, const RunRecord& run, const RunJournal& journal,
                    int code, std::FILE* out, std::FILE* err) {
  if (!options.baseline.empty() && !run.phases.empty()) {
    auto table = FormatBaselineTables(
        run, options.baseline, MakeTableView(options.all_hosts, options.group_by, run.agents));
    std::fputs(table.ok() ? table->c_str() : "", out);
  }
  if (!options.json_path.empty()) {
    Status written = WriteJsonReport(run, options.json_path);
    if (!written.ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(written.message()).c_str());
      if (code == kExitOk) code = kExitSomeFailed;
    } else {
      std::fprintf(out, "JSON report: %s\n", options.json_path.c_str());
    }
  }
  for (auto [path, plus] :
       {std::pair{&options.fio_json_path, false}, std::pair{&options.fio_json_plus_path, true}}) {
    if (path->empty()) continue;
    Status written = fio::WriteFioJson(run, *path, plus);
    if (!written.ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(written.message()).c_str());
      if (code == kExitOk) code = kExitSomeFailed;
    } else {
      std::fprintf(out, "fio JSON%s: %s\n", plus ? "+" : "", path->c_str());
    }
  }
  {
    // The interval logs a job file asks for (write_bw_log, write_lat_log, write_iops_log).
    std::vector<std::string> logs;
    Status written = fio::WriteFioLogs(run, &logs);
    if (!written.ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(written.message()).c_str());
      if (code == kExitOk) code = kExitSomeFailed;
    }
    if (!logs.empty()) {
      std::fprintf(out, "fio logs: %zu file%s (%s%s)\n", logs.size(), logs.size() == 1 ? "" : "s",
                   logs.front().c_str(), logs.size() > 1 ? ", ..." : "");
    }
  }
  if (!options.csv_path.empty()) {
    Status written = WriteBonnieCsv(run, options.csv_path);
    if (!written.ok()) {
      std::fprintf(err, "stormark: %s\n", std::string(written.message()).c_str());
      if (code == kExitOk) code = kExitSomeFailed;
    } else {
      std::fprintf(out, "bonnie++ CSV: %s\n", options.csv_path.c_str());
    }
  }
  if (journal.healthy()) {
    std::fprintf(out, "Results: %s (stormark results show %s)\n", journal.path().c_str(),
                 run.run_id.c_str());
  } else if (!options.no_db && code == kExitOk) {
    code = kExitSomeFailed;
  }
  return code;
}

}  // namespace stormark::controller
