// `stormark report RUN -o report.html`: one self-contained HTML file for people, built from
// a run in the results history. It holds the run's facts, a table per phase with every host's
// figures (median [min-max] over repetitions) shaded as bon_csv2html shades bonnie++'s, the
// notes that qualify the figures, the charts of report_charts.h, and the environment of each
// host and target with the differences highlighted; for a fleet, groups of hosts instead.
//
// The page loads nothing: styles are inline, the charts are inline SVG, there is no script,
// and a Content-Security-Policy forbids any fetch. Every user- or agent-supplied string is
// escaped. Pure.
#ifndef STORMARK_CONTROLLER_REPORT_HTML_REPORT_HTML_H_
#define STORMARK_CONTROLLER_REPORT_HTML_REPORT_HTML_H_

#include <string>

#include "controller/report/host_groups.h"
#include "controller/results/results_query.h"

namespace stormark::controller {

// Past view.collapse_above hosts, and without view.all_hosts, the page is a fleet's: each
// phase run's table is the one `stormark results show` prints (a row per group of hosts, the
// hosts that stand out by name, notes grouped by text), the charts draw groups and the hosts
// that stand out (group_charts.h), and the environment gives each fact's values with how many
// hosts have each. Its size then grows with the groups, not the hosts.
std::string HtmlReport(const StoredRun& run, const TableView& view = {});

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HTML_REPORT_HTML_H_
