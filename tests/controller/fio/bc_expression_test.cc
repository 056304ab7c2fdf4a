#include "controller/fio/bc_expression.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller::fio {
namespace {

using ::testing::HasSubstr;

// Expected values from GNU bc 1.07.1, given each text as fio gives it (echo 'TEXT' | bc).
TEST(BcExpression, ComputesIntegerArithmeticLikeBc) {
  EXPECT_EQ(*EvaluateBcExpression("8*16384"), 131072);
  EXPECT_EQ(*EvaluateBcExpression(" 8 * 16384 "), 131072);
  EXPECT_EQ(*EvaluateBcExpression("4-1"), 3);
  EXPECT_EQ(*EvaluateBcExpression("-2^2"), 4);
  EXPECT_EQ(*EvaluateBcExpression("7/-2"), -3);
  EXPECT_EQ(*EvaluateBcExpression("-7%3"), -1);
  EXPECT_EQ(*EvaluateBcExpression("2^-1"), 0);
  EXPECT_EQ(*EvaluateBcExpression("(-1)^-3"), -1);
  EXPECT_EQ(*EvaluateBcExpression("2^3^2"), 512);
  EXPECT_EQ(*EvaluateBcExpression("10-3-2"), 5);
  EXPECT_EQ(*EvaluateBcExpression("2*3%4"), 2);
  EXPECT_EQ(*EvaluateBcExpression("(2*4)"), 8);
}

TEST(BcExpression, RejectsWhatBcRejects) {
  for (std::string_view text : {"1/0", "--3", "+3", "4k", "(2*16384)m", "/tmp/4/x", "", "3 4"}) {
    EXPECT_FALSE(EvaluateBcExpression(text).ok()) << text;
  }
  EXPECT_THAT(EvaluateBcExpression("1.5*2").status().message(), HasSubstr("fraction"));
  EXPECT_THAT(EvaluateBcExpression("2^64").status().message(), HasSubstr("overflows 64 bits"));
}

}  // namespace
}  // namespace stormark::controller::fio
