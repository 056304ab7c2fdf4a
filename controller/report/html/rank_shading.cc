#include "controller/report/html/rank_shading.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "fmt/format.h"

namespace stormark::controller {

std::vector<std::string> RankShades(const std::vector<std::optional<double>>& values,
                                    bool higher_is_better) {
  std::vector<std::string> shades(values.size());
  std::set<double> distinct;
  for (const auto& v : values) {
    if (v && *v > 0 && std::isfinite(*v)) distinct.insert(*v);
  }
  if (distinct.size() < 2) return shades;
  double low = *distinct.begin(), high = *distinct.rbegin();
  // bon_csv2html: when max / min < 2, widen the range by sqrt(2 / ratio) on both sides.
  const double ratio = high / low;
  if (ratio < 2.0) {
    const double widen = std::sqrt(2.0 / ratio);
    high *= widen;
    low /= widen;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& v = values[i];
    if (!v || *v <= 0 || !std::isfinite(*v)) continue;
    double position = (*v - low) / (high - low);
    if (!higher_is_better) position = 1 - position;
    const int green = std::clamp(static_cast<int>(255.0 * position), 0, 255);
    const int red = 255 - green;
    // Halfway to white.
    shades[i] = fmt::format("#{:02x}{:02x}{:02x}", (red + 255) / 2, (green + 255) / 2, 255 / 2);
  }
  return shades;
}

}  // namespace stormark::controller
