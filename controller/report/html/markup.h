// Escaping for the markup stormark writes: the HTML report and its SVG charts, and JUnit XML.
// Host names, labels, target names and error lines come from users and agents; every such
// string goes through EscapeMarkup before it is written, in text and in attribute values.
#ifndef STORMARK_CONTROLLER_REPORT_HTML_MARKUP_H_
#define STORMARK_CONTROLLER_REPORT_HTML_MARKUP_H_

#include <string>
#include <string_view>

namespace stormark::controller {

// `text` with & < > " ' replaced by entities, and control characters other than tab and
// newline (which XML 1.0 cannot carry at all) replaced by U+FFFD. Safe in element text and
// in quoted attribute values, for HTML and XML alike. Invalid UTF-8 passes through as
// bytes; the writers declare UTF-8.
std::string EscapeMarkup(std::string_view text);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HTML_MARKUP_H_
