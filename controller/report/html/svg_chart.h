// Inline SVG charts for the HTML report: line charts (sweep curves, latency percentiles and
// CDFs, time series) and grouped bar charts, drawn here so the report needs no script and no
// network to show them.
//
// Every string in a chart (titles, series names, tooltips, category labels) is escaped.
// Each chart is one <svg class="chart"> whose data-kind, data-series and data-points
// attributes say what it holds; every data point is an element with a <title> tooltip
// (a <circle class="point"> or a <rect class="bar">), so the page can be checked by a
// browser or a parser without reading pixels. All functions are pure.
#ifndef STORMARK_CONTROLLER_REPORT_HTML_SVG_CHART_H_
#define STORMARK_CONTROLLER_REPORT_HTML_SVG_CHART_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stormark::controller {

struct ChartPoint {
  // On a category axis, x is the category's index.
  double x = 0;
  double y = 0;
  // A whisker from low to high (the range over repetitions), when set.
  std::optional<double> low, high;
  // The tooltip: what the point is, in words and with its unit.
  std::string tip;
};

struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;  // drawn in this order
  // Line charts: the points' low-high ranges drawn as one shaded band along the line instead
  // of a whisker each (a range across hosts at every point of a time series).
  bool band = false;
};

struct ChartAxis {
  std::string title;
  // Logarithmic; values <= 0 are left out.
  bool log = false;
  // A linear axis starts at zero unless this is false.
  bool from_zero = true;
  // Tick labels; default: the number with up to 4 significant digits.
  std::function<std::string(double)> format;
  // Non-empty: a category axis, one tick per category, x = its index.
  std::vector<std::string> categories;
  // Non-empty: these ticks (value, label) instead of computed ones; the range covers them.
  std::vector<std::pair<double, std::string>> ticks;
};

struct Chart {
  std::string title;
  ChartAxis x, y;
  std::vector<ChartSeries> series;
};

// One line per series with a dot per point. "" when no series has a point to draw.
std::string LineChartSvg(const Chart& chart);

// A group of bars per category of chart.x (which must have categories), one bar per series,
// with whiskers where the points have them. The y axis is linear. "" when there is nothing
// to draw.
std::string BarChartSvg(const Chart& chart);

// The colour of series `index` (a colour-blind-safe palette, repeating after 10).
std::string SeriesColor(size_t index);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HTML_SVG_CHART_H_
