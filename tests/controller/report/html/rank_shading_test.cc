#include "controller/report/html/rank_shading.h"

#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

TEST(RankShades, BestIsGreenWorstIsRedWhenTheyDifferByMoreThanTwice) {
  const auto shades = RankShades({100.0, 400.0, 250.0}, /*higher_is_better=*/true);
  ASSERT_EQ(shades.size(), 3u);
  EXPECT_EQ(shades[0], "#ff7f7f");  // pure red, halfway to white
  EXPECT_EQ(shades[1], "#7fff7f");  // pure green, halfway to white
  EXPECT_NE(shades[2], shades[0]);
  EXPECT_NE(shades[2], shades[1]);
}

TEST(RankShades, LowerIsBetterReversesTheColours) {
  const auto shades = RankShades({100.0, 400.0}, /*higher_is_better=*/false);
  EXPECT_EQ(shades[0], "#7fff7f");
  EXPECT_EQ(shades[1], "#ff7f7f");
}

TEST(RankShades, CloseFiguresArePaleAsInBonCsv2html) {
  // 100 vs 110: the range is widened to 2x around them, so neither end is pure.
  const auto shades = RankShades({100.0, 110.0}, true);
  EXPECT_NE(shades[0], "#ff7f7f");
  EXPECT_NE(shades[1], "#7fff7f");
  EXPECT_FALSE(shades[0].empty());
}

TEST(RankShades, MissingZeroAndSingleFiguresAreNotShaded) {
  const auto shades = RankShades({std::nullopt, 0.0, 5.0, 9.0}, true);
  EXPECT_EQ(shades[0], "");
  EXPECT_EQ(shades[1], "");
  EXPECT_FALSE(shades[2].empty());
  for (const auto& s : RankShades({7.0, 7.0, std::nullopt}, true)) EXPECT_EQ(s, "");
}

}  // namespace
}  // namespace stormark::controller
