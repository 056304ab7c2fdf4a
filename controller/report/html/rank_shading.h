// The cell shading of bon_csv2html (bonnie++'s HTML table), for any column of figures: the
// worst figure red, the best green, the rest in between by value. As bon_csv2html does,
// a column whose best and worst differ by less than 2x is shaded on a range widened to 2x
// around them, so small differences get pale shades rather than the full red-to-green.
// Colours are blended halfway to white so the figures stay readable.
#ifndef STORMARK_CONTROLLER_REPORT_HTML_RANK_SHADING_H_
#define STORMARK_CONTROLLER_REPORT_HTML_RANK_SHADING_H_

#include <optional>
#include <string>
#include <vector>

namespace stormark::controller {

// One CSS colour ("#rrggbb") per value, or "" for a value that is missing or zero (bonnie++
// leaves those white), and "" for every value when fewer than two distinct figures remain.
// Pure.
std::vector<std::string> RankShades(const std::vector<std::optional<double>>& values,
                                    bool higher_is_better);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HTML_RANK_SHADING_H_
