#include "controller/report/html/svg_chart.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

Chart TwoHosts() {
  Chart chart;
  chart.title = "seq-write: MiB/s against chunk";
  chart.x.title = "chunk";
  chart.x.categories = {"64k", "256k", "1M"};
  chart.y.title = "MiB/s";
  chart.series = {{"db1",
                   {{0, 100, 90.0, 110.0, "db1 64k"},
                    {1, 140, {}, {}, "db1 256k"},
                    {2, 120, {}, {}, "db1 1M"}}},
                  {"db2", {{0, 80, {}, {}, "db2 64k"}, {2, 95, {}, {}, "db2 1M"}}}};
  return chart;
}

TEST(LineChartSvg, OneLineAndOneDotPerPointWithItsTooltip) {
  const std::string svg = LineChartSvg(TwoHosts());
  EXPECT_THAT(svg, HasSubstr("<svg class=\"chart\" data-kind=\"line\" data-series=\"2\" "
                             "data-points=\"5\""));
  EXPECT_EQ(Count(svg, "<path class=\"line\""), 2u);
  EXPECT_EQ(Count(svg, "<circle class=\"point\""), 5u);
  EXPECT_EQ(Count(svg, "class=\"whisker\""), 1u);
  EXPECT_THAT(svg, HasSubstr("<title>db1 256k</title>"));
  for (const char* label : {">64k<", ">256k<", ">1M<", ">MiB/s<", ">db2<"}) {
    EXPECT_THAT(svg, HasSubstr(label));
  }
  EXPECT_TRUE(svg.ends_with("</svg>"));
}

TEST(LineChartSvg, EscapesEveryString) {
  Chart chart = TwoHosts();
  chart.title = "<b>t</b>";
  chart.series[0].name = "host\"><script>x</script>";
  chart.series[0].points[0].tip = "a<b";
  chart.x.categories[0] = "&";
  const std::string svg = LineChartSvg(chart);
  EXPECT_THAT(svg, Not(HasSubstr("<script>")));
  EXPECT_THAT(svg, Not(HasSubstr("<b>t")));
  EXPECT_THAT(svg, HasSubstr("host&quot;&gt;&lt;script&gt;"));
  EXPECT_THAT(svg, HasSubstr("<title>a&lt;b</title>"));
  EXPECT_THAT(svg, HasSubstr(">&amp;<"));
}

TEST(LineChartSvg, LogAxisLeavesOutValuesItCannotDraw) {
  Chart chart;
  chart.x.log = true;
  chart.y.log = true;
  chart.series = {{"h",
                   {{0, 5, {}, {}, ""},
                    {1000, 0, {}, {}, ""},
                    {2000, 50, {}, {}, ""},
                    {1e6, 5e3, {}, {}, ""}}}};
  const std::string svg = LineChartSvg(chart);
  EXPECT_THAT(svg, HasSubstr("data-points=\"2\""));
  EXPECT_THAT(svg, HasSubstr(">1000<"));  // a decade tick
}

TEST(LineChartSvg, NothingToDrawIsEmpty) {
  Chart chart;
  EXPECT_EQ(LineChartSvg(chart), "");
  chart.series = {{"h", {}}};
  EXPECT_EQ(LineChartSvg(chart), "");
  EXPECT_EQ(BarChartSvg(chart), "");
}

TEST(BarChartSvg, ABarPerSeriesAndCategory) {
  const std::string svg = BarChartSvg(TwoHosts());
  EXPECT_THAT(svg, HasSubstr("data-kind=\"bar\" data-series=\"2\" data-points=\"5\""));
  EXPECT_EQ(Count(svg, "<rect class=\"bar\""), 5u);
  EXPECT_EQ(Count(svg, "class=\"whisker\""), 1u);
  EXPECT_THAT(svg, HasSubstr("<title>db2 1M</title>"));
}

TEST(BarChartSvg, NeedsCategories) {
  Chart chart = TwoHosts();
  chart.x.categories.clear();
  EXPECT_EQ(BarChartSvg(chart), "");
}

}  // namespace
}  // namespace stormark::controller
