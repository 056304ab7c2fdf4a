// `stormark report RUN -o FILE`: the HTML report of a recorded run (html/report_html.h).
// RUN is a run id, a unique prefix of one, or "latest". Past 32 hosts, and without
// --all-hosts, the tables and charts show groups of hosts (--group-by) and name the hosts that
// stand out. Bad input (no database, unknown run, a bad --group-by, a file that cannot be
// written) is one "stormark: ..." line on `err` and exit code 2.
#ifndef STORMARK_CONTROLLER_RESULTS_REPORT_COMMAND_H_
#define STORMARK_CONTROLLER_RESULTS_REPORT_COMMAND_H_

#include <cstdio>
#include <string>

namespace stormark::controller {

struct ReportOptions {
  // --db PATH; empty means DefaultResultsPath().
  std::string db_path;
  // -o FILE.
  std::string output;
  // --all-hosts and --group-by, as for `results show` (report/host_groups.h TableView).
  bool all_hosts = false;
  std::string group_by;
};

int ReportCommand(const ReportOptions& options, const std::string& run, std::FILE* out,
                  std::FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_REPORT_COMMAND_H_
