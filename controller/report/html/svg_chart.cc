#include "controller/report/html/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "controller/report/html/markup.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

constexpr double kWidth = 640;
constexpr double kLeft = 76;
constexpr double kRight = 18;
constexpr double kTop = 30;
constexpr double kPlotHeight = 220;
constexpr double kAxisBand = 44;  // tick labels and the x axis title under the plot
constexpr double kLegendRow = 18;
constexpr double kCharWidth = 6.6;  // of the 11px legend font, for laying out the legend

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

// Whole numbers as such ("15000", not "1.5e+04"); others with 4 significant digits.
std::string DefaultFormat(double value) {
  if (std::abs(value) < 1e9 && value == std::floor(value)) return fmt::format("{:.0f}", value);
  return fmt::format("{:.4g}", value);
}

// The span an axis covers, and how a value maps onto it.
class Scale {
 public:
  Scale(const ChartAxis& axis, double lo, double hi, double from, double to)
      : log_(axis.log), from_(from), to_(to) {
    if (log_) {
      lo_ = std::log10(lo);
      hi_ = std::log10(hi);
    } else {
      lo_ = lo;
      hi_ = hi;
    }
    if (hi_ <= lo_) hi_ = lo_ + 1;
  }
  double operator()(double value) const {
    const double v = log_ ? std::log10(value) : value;
    return from_ + (v - lo_) / (hi_ - lo_) * (to_ - from_);
  }

 private:
  bool log_;
  double lo_ = 0, hi_ = 1, from_, to_;
};

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

bool Drawable(const ChartAxis& axis, double v) { return std::isfinite(v) && (!axis.log || v > 0); }

// 1, 2 or 5 times a power of ten, near span / 5.
double NiceStep(double span) {
  const double raw = span / 5;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

// The axis's range and ticks for data in `range`.
std::vector<std::pair<double, std::string>> Ticks(const ChartAxis& axis, Range* range) {
  std::vector<std::pair<double, std::string>> ticks = axis.ticks;
  const auto& format = axis.format ? axis.format : DefaultFormat;
  if (!ticks.empty()) {
    for (const auto& [value, label] : ticks) range->Add(value);
    return ticks;
  }
  if (axis.log) {
    double lo = std::pow(10, std::floor(std::log10(range->lo)));
    double hi = std::pow(10, std::ceil(std::log10(range->hi)));
    if (hi <= lo) hi = lo * 10;
    const bool fine = std::log10(hi / lo) <= 2;
    for (double decade = lo; decade <= hi * 1.0001; decade *= 10) {
      for (double m : {1.0, 2.0, 5.0}) {
        if ((m != 1.0 && !fine) || decade * m > hi * 1.0001) continue;
        ticks.emplace_back(decade * m, format(decade * m));
      }
    }
    range->lo = lo;
    range->hi = hi;
    return ticks;
  }
  if (axis.from_zero) {
    range->lo = std::min(range->lo, 0.0);
    range->hi = std::max(range->hi, 0.0);
  }
  if (range->hi <= range->lo) range->hi = range->lo + (range->lo == 0 ? 1 : std::abs(range->lo));
  const double step = NiceStep(range->hi - range->lo);
  range->lo = std::floor(range->lo / step) * step;
  range->hi = std::ceil(range->hi / step) * step;
  for (double v = range->lo; v <= range->hi + step / 2; v += step) {
    ticks.emplace_back(std::abs(v) < step / 1e6 ? 0 : v, format(std::abs(v) < step / 1e6 ? 0 : v));
  }
  return ticks;
}

// The y range of every drawable point, whiskers included.
Range YRange(const Chart& chart) {
  Range range;
  for (const ChartSeries& s : chart.series) {
    for (const ChartPoint& p : s.points) {
      for (std::optional<double> v : {std::optional<double>(p.y), p.low, p.high}) {
        if (v && Drawable(chart.y, *v)) range.Add(*v);
      }
    }
  }
  return range;
}

size_t CountPoints(const Chart& chart) {
  size_t n = 0;
  for (const ChartSeries& s : chart.series) {
    for (const ChartPoint& p : s.points) {
      if (Drawable(chart.x, p.x) && Drawable(chart.y, p.y)) ++n;
    }
  }
  return n;
}

// Legend rows laid out left to right under the plot.
struct LegendItem {
  double x, y;
};
std::vector<LegendItem> LayOutLegend(const Chart& chart, double top) {
  std::vector<LegendItem> items;
  double x = kLeft, y = top;
  for (const ChartSeries& s : chart.series) {
    const double width = 22 + kCharWidth * static_cast<double>(s.name.size()) + 14;
    if (x + width > kWidth - kRight && x > kLeft) {
      x = kLeft;
      y += kLegendRow;
    }
    items.push_back({x, y});
    x += width;
  }
  return items;
}

std::string Num(double v) { return fmt::format("{:.1f}", v); }

// The frame: <svg> head, title, grid, ticks and axis titles. `height` is the whole chart's.
std::string Frame(const Chart& chart, std::string_view kind, size_t points, double height,
                  const std::vector<std::pair<double, std::string>>& x_ticks, const Scale& x_scale,
                  const std::vector<std::pair<double, std::string>>& y_ticks,
                  const Scale& y_scale) {
  const double bottom = kTop + kPlotHeight;
  std::string out = fmt::format(
      "<svg class=\"chart\" data-kind=\"{}\" data-series=\"{}\" data-points=\"{}\" "
      "viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\">\n",
      kind, chart.series.size(), points, kWidth, Num(height), kWidth, Num(height),
      EscapeMarkup(chart.title));
  out += fmt::format("<text class=\"title\" x=\"{}\" y=\"18\">{}</text>\n", Num(kLeft),
                     EscapeMarkup(chart.title));
  for (const auto& [value, label] : y_ticks) {
    const double y = y_scale(value);
    out += fmt::format(
        "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>"
        "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
        Num(kLeft), Num(kWidth - kRight), Num(y), Num(y), Num(kLeft - 6), Num(y + 4),
        EscapeMarkup(label));
  }
  for (const auto& [value, label] : x_ticks) {
    const double x = x_scale(value);
    out += fmt::format(
        "<line class=\"tickmark\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>"
        "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
        Num(x), Num(x), Num(bottom), Num(bottom + 4), Num(x), Num(bottom + 16),
        EscapeMarkup(label));
  }
  out += fmt::format(
      "<line class=\"axis\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>"
      "<line class=\"axis\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>\n",
      Num(kLeft), Num(kWidth - kRight), Num(bottom), Num(bottom), Num(kLeft), Num(kLeft), Num(kTop),
      Num(bottom));
  out += fmt::format(
      "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
      Num(kLeft + (kWidth - kLeft - kRight) / 2), Num(bottom + 34), EscapeMarkup(chart.x.title));
  out += fmt::format(
      "<text class=\"axis-title\" transform=\"translate(14 {}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>\n",
      Num(kTop + kPlotHeight / 2), EscapeMarkup(chart.y.title));
  return out;
}

std::string Legend(const Chart& chart, const std::vector<LegendItem>& items, bool bars) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    const LegendItem& item = items[i];
    const std::string swatch =
        bars ? fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>",
                           Num(item.x), Num(item.y - 9), SeriesColor(i))
             : fmt::format(
                   "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" "
                   "stroke-width=\"2.5\"/>",
                   Num(item.x), Num(item.x + 16), Num(item.y - 4), Num(item.y - 4), SeriesColor(i));
    out += fmt::format("<g class=\"legend\">{}<text x=\"{}\" y=\"{}\">{}</text></g>\n", swatch,
                       Num(item.x + 22), Num(item.y), EscapeMarkup(chart.series[i].name));
  }
  return out;
}

std::string Whisker(double x, double y_low, double y_high, const std::string& color) {
  return fmt::format(
      "<path class=\"whisker\" d=\"M{0} {1}V{2}M{3} {1}H{4}M{3} {2}H{4}\" stroke=\"{5}\"/>", Num(x),
      Num(y_low), Num(y_high), Num(x - 3), Num(x + 3), color);
}

double ChartHeight(const std::vector<LegendItem>& legend) {
  const double legend_top = kTop + kPlotHeight + kAxisBand + 12;
  return (legend.empty() ? legend_top : legend.back().y) + 10;
}

}  // namespace

std::string SeriesColor(size_t index) { return kPalette[index % std::size(kPalette)]; }

std::string LineChartSvg(const Chart& chart) {
  const size_t points = CountPoints(chart);
  if (points == 0) return "";
  Range x_range, y_range = YRange(chart);
  for (const ChartSeries& s : chart.series) {
    for (const ChartPoint& p : s.points) {
      if (Drawable(chart.x, p.x) && Drawable(chart.y, p.y)) x_range.Add(p.x);
    }
  }
  std::vector<std::pair<double, std::string>> x_ticks;
  if (!chart.x.categories.empty()) {
    for (size_t i = 0; i < chart.x.categories.size(); ++i) {
      x_ticks.emplace_back(static_cast<double>(i), chart.x.categories[i]);
    }
    x_range = {-0.5, static_cast<double>(chart.x.categories.size()) - 0.5};
  } else {
    x_ticks = Ticks(chart.x, &x_range);
  }
  const std::vector<std::pair<double, std::string>> y_ticks = Ticks(chart.y, &y_range);
  const Scale x_scale(chart.x, x_range.lo, x_range.hi, kLeft + 4, kWidth - kRight - 4);
  const Scale y_scale(chart.y, y_range.lo, y_range.hi, kTop + kPlotHeight, kTop);
  const std::vector<LegendItem> legend = LayOutLegend(chart, kTop + kPlotHeight + kAxisBand + 12);
  const double height = ChartHeight(legend);

  std::string out = Frame(chart, "line", points, height, x_ticks, x_scale, y_ticks, y_scale);
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const std::string color = SeriesColor(i);
    std::string path, marks, upper, lower;
    const bool dots = s.points.size() <= 120;
    for (const ChartPoint& p : s.points) {
      if (!Drawable(chart.x, p.x) || !Drawable(chart.y, p.y)) continue;
      const double x = x_scale(p.x), y = y_scale(p.y);
      path += fmt::format("{}{} {}", path.empty() ? "M" : "L", Num(x), Num(y));
      if (p.low && p.high && Drawable(chart.y, *p.low) && Drawable(chart.y, *p.high)) {
        if (s.band) {
          // The band's upper edge left to right, its lower edge right to left.
          upper += fmt::format("{}{} {}", upper.empty() ? "M" : "L", Num(x), Num(y_scale(*p.high)));
          lower = fmt::format("L{} {}", Num(x), Num(y_scale(*p.low))) + lower;
        } else {
          marks += Whisker(x, y_scale(*p.low), y_scale(*p.high), color);
        }
      }
      marks += fmt::format(
          "<circle class=\"point\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"><title>{}</title>"
          "</circle>",
          Num(x), Num(y), dots ? "3" : "1.5", color, EscapeMarkup(p.tip));
    }
    const std::string band = upper.empty() ? ""
                                           : fmt::format(
                                                 "<path class=\"band\" d=\"{}{}Z\" fill=\"{}\" "
                                                 "fill-opacity=\"0.2\" stroke=\"none\"/>",
                                                 upper, lower, color);
    out += fmt::format(
        "<g class=\"series\" data-name=\"{}\">{}<path class=\"line\" d=\"{}\" stroke=\"{}\"/>"
        "{}</g>\n",
        EscapeMarkup(s.name), band, path, color, marks);
  }
  out += Legend(chart, legend, /*bars=*/false);
  out += "</svg>";
  return out;
}

std::string BarChartSvg(const Chart& chart) {
  const size_t categories = chart.x.categories.size();
  const size_t points = CountPoints(chart);
  if (categories == 0 || points == 0 || chart.series.empty()) return "";
  Range y_range = YRange(chart);
  ChartAxis y_axis = chart.y;
  y_axis.log = false;
  const std::vector<std::pair<double, std::string>> y_ticks = Ticks(y_axis, &y_range);
  const double plot_width = kWidth - kLeft - kRight;
  const double group = plot_width / static_cast<double>(categories);
  const double bar = group * 0.8 / static_cast<double>(chart.series.size());
  std::vector<std::pair<double, std::string>> x_ticks;
  // A label wider than its group would run into its neighbours' (about 6.5 px a character
  // in the tick font): it is cut, and each bar's tooltip still names its category whole.
  const size_t fits = static_cast<size_t>(std::max(3.0, group / 6.5));
  for (size_t i = 0; i < categories; ++i) {
    std::string label = chart.x.categories[i];
    if (label.size() > fits) label = label.substr(0, fits - 1) + "\u2026";
    x_ticks.emplace_back(static_cast<double>(i), std::move(label));
  }
  const Scale x_scale(ChartAxis{}, -0.5, static_cast<double>(categories) - 0.5, kLeft,
                      kWidth - kRight);
  const Scale y_scale(y_axis, y_range.lo, y_range.hi, kTop + kPlotHeight, kTop);
  const std::vector<LegendItem> legend = LayOutLegend(chart, kTop + kPlotHeight + kAxisBand + 12);
  const double height = ChartHeight(legend);

  std::string out = Frame(chart, "bar", points, height, x_ticks, x_scale, y_ticks, y_scale);
  const double zero = y_scale(std::max(0.0, y_range.lo));
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    const std::string color = SeriesColor(i);
    std::string marks;
    for (const ChartPoint& p : s.points) {
      if (!Drawable(chart.x, p.x) || !Drawable(y_axis, p.y)) continue;
      const double left = x_scale(p.x) - group * 0.4 + bar * static_cast<double>(i);
      const double top = y_scale(p.y);
      marks += fmt::format(
          "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
          "<title>{}</title></rect>",
          Num(left), Num(std::min(top, zero)), Num(std::max(bar - 1, 1.0)),
          Num(std::abs(zero - top)), color, EscapeMarkup(p.tip));
      if (p.low && p.high) {
        marks += Whisker(left + bar / 2, y_scale(*p.low), y_scale(*p.high), "#333");
      }
    }
    out +=
        fmt::format("<g class=\"series\" data-name=\"{}\">{}</g>\n", EscapeMarkup(s.name), marks);
  }
  out += Legend(chart, legend, /*bars=*/true);
  out += "</svg>";
  return out;
}

}  // namespace stormark::controller
