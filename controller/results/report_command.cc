#include "controller/results/report_command.h"

#include "common/atomic_file.h"
#include "common/strings.h"
#include "controller/report/host_groups.h"
#include "controller/report/html/report_html.h"
#include "controller/results/results_query.h"

namespace stormark::controller {

int ReportCommand(const ReportOptions& options, const std::string& ref, std::FILE* out,
                  std::FILE* err) {
  auto fail = [err](const common::Status& status) {
    std::fprintf(err, "stormark: %s\n", std::string(status.message()).c_str());
    return 2;
  };
  if (!options.group_by.empty()) {
    if (common::Status s = CheckGroupBy(options.group_by); !s.ok()) return fail(s);
  }
  auto store = OpenResultsForReading(options.db_path, err);
  if (!store.ok()) return fail(store.status());
  auto run = LoadNamedRun(**store, ref);
  if (!run.ok()) return fail(run.status());
  const std::string html =
      HtmlReport(*run, MakeTableView(options.all_hosts, options.group_by, run->record.agents));
  const common::Status written = common::WriteFileAtomically(options.output, html);
  if (!written.ok()) return fail(common::Annotate(written, "-o"));
  std::fprintf(out, "HTML report of %s: %s (%zu KiB)\n", run->listing.run_id.c_str(),
               options.output.c_str(), (html.size() + 1023) / 1024);
  return 0;
}

}  // namespace stormark::controller
