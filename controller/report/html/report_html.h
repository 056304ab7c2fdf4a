// `stormark report RUN -o report.html`: one self-contained HTML file for people, built from
// a run in the results history. It holds the run's facts, a table per phase with every host's
// figures (median [min-max] over repetitions) shaded as bon_csv2html shades bonnie++'s, the
// notes that qualify the figures, the charts of report_charts.h, and the environment of each
// host and target with the differences highlighted.
//
// The page loads nothing: styles are inline, the charts are inline SVG, there is no script,
// and a Content-Security-Policy forbids any fetch. Every user- or agent-supplied string is
// escaped. Pure.
#ifndef STORMARK_CONTROLLER_REPORT_HTML_REPORT_HTML_H_
#define STORMARK_CONTROLLER_REPORT_HTML_REPORT_HTML_H_

#include <string>

#include "controller/results/results_query.h"

namespace stormark::controller {

std::string HtmlReport(const StoredRun& run);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HTML_REPORT_HTML_H_
