#include "controller/fio/fio_expression.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller::fio {
namespace {

using ::testing::HasSubstr;

// The expected values were computed by fio's own exp/expression-parser.y and .l, built with
// bison and flex from fio's repository, on the same inputs.
int64_t Bytes(std::string_view text) {
  auto value = EvaluateFioExpression(text, FioUnits::kBytes);
  EXPECT_TRUE(value.ok()) << text << ": " << value.status();
  return value.ok() ? value->value : -999;
}

int64_t Micros(std::string_view text) {
  auto value = EvaluateFioExpression(text, FioUnits::kTime);
  EXPECT_TRUE(value.ok()) << text << ": " << value.status();
  return value.ok() ? value->value : -999;
}

std::string Error(std::string_view text, FioUnits units = FioUnits::kBytes) {
  auto value = EvaluateFioExpression(text, units);
  EXPECT_FALSE(value.ok()) << text << " gave " << (value.ok() ? value->value : 0);
  return std::string(value.status().message());
}

TEST(FioExpression, OperatorsFollowFiosPrecedenceNotTheUsualOne) {
  EXPECT_EQ(Bytes("(2+3*4)"), 14);
  EXPECT_EQ(Bytes("(10-3-2)"), 5);
  EXPECT_EQ(Bytes("(100/10/5)"), 2);
  EXPECT_EQ(Bytes("(2^3^2)"), 512);  // right to left
  EXPECT_EQ(Bytes("(10*7%4)"), 30);  // % binds tighter than *
  EXPECT_EQ(Bytes("(2^3%2)"), 2);    // and tighter than ^
  EXPECT_EQ(Bytes("(-2^2)"), 4);     // unary minus binds tightest
  EXPECT_EQ(Bytes("(--3)"), 3);
  EXPECT_EQ(Bytes("(-3%2)"), -1);
  EXPECT_EQ(Bytes("(7/2)"), 3);
  EXPECT_EQ(Bytes("(2^-1)"), 0);
  EXPECT_EQ(Bytes("(1+2)*(3+4)"), 21);
  EXPECT_EQ(Bytes("( 2 * 3 )"), 6);
}

TEST(FioExpression, AUnitScalesWhatPrecedesItUpToAPlusOrMinus) {
  EXPECT_EQ(Bytes("(2*1024)m"), 2147483648);
  EXPECT_EQ(Bytes("(1+2k)"), 2049);
  EXPECT_EQ(Bytes("(2-3k)"), -3070);
  EXPECT_EQ(Bytes("(2*3k*2)"), 12288);
  EXPECT_EQ(Bytes("(2)*(3)k"), 6144);
  EXPECT_EQ(Bytes("(10)%(4)k"), 2048);
  EXPECT_EQ(Bytes("(1)+(2)k"), 2049);
  EXPECT_EQ(Bytes("(2kk)"), 2097152);
  EXPECT_EQ(Bytes("(1k*1k)"), 1048576);
  EXPECT_EQ(Bytes("(2) m"), 2097152);
}

TEST(FioExpression, UnitsIgnoreKbBaseAndKeepFiosTable) {
  EXPECT_EQ(Bytes("(4)kb"), 4096);
  EXPECT_EQ(Bytes("(3kib)"), 3000);
  EXPECT_EQ(Bytes("(1)gib"), 1000000000);
  EXPECT_EQ(Bytes("(1)pib"), 1000000000000);  // fio's lexer: 10^12
  auto kib = EvaluateFioExpression("(3kib)", FioUnits::kBytes);
  ASSERT_TRUE(kib.ok());
  EXPECT_TRUE(kib->ambiguous_unit);
  EXPECT_TRUE(kib->units_specified);
  auto k = EvaluateFioExpression("(3k)", FioUnits::kBytes);
  ASSERT_TRUE(k.ok());
  EXPECT_FALSE(k->ambiguous_unit);
  auto plain = EvaluateFioExpression("(3)", FioUnits::kBytes);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->units_specified);
}

TEST(FioExpression, TimeUnitsAreMicrosecondsAndMIsMinutes) {
  EXPECT_EQ(Micros("(2*1024)m"), 122880000000);
  EXPECT_EQ(Micros("(1m+30s)"), 90000000);
  EXPECT_EQ(Micros("(1500ms)"), 1500000);
  EXPECT_EQ(Micros("(5ms)"), 5000);
  EXPECT_EQ(Micros("(1h)"), 3600000000);
  EXPECT_EQ(Micros("(1d)"), 86400000000);
  EXPECT_EQ(Micros("(10us)"), 10);
}

TEST(FioExpression, FractionsFollowFiosIntegerAndDoubleRules) {
  EXPECT_EQ(Bytes("(1.5*1024)m"), 1610612736);
  EXPECT_EQ(Bytes("(1+2.5)*2"), 6);  // the sum keeps 1's "integer" flag, then 3*2
  EXPECT_EQ(Bytes("(2.5+1)*2"), 7);
  EXPECT_EQ(Bytes("(7.0/2)"), 3);
  EXPECT_EQ(Bytes("(.5*4)"), 2);
  EXPECT_EQ(Bytes("(1e3)"), 1000);
  EXPECT_EQ(Bytes("(1.5)k"), 1024);  // fio drops the fraction before the unit
  EXPECT_EQ(Bytes("(1.5t)"), 1125899906842624);
  EXPECT_EQ(Bytes("(29*(-0.5))"), 0);
  EXPECT_EQ(Micros("(1.5ms)"), 1000);
  EXPECT_EQ(Bytes("(0x10+1)"), 17);
  EXPECT_EQ(Bytes("(0x1b)"), 27);
}

TEST(FioExpression, TenLevelsOfNestingEvaluate) {
  EXPECT_EQ(Bytes("((((((((((1+1)*2)+1)*2)+1)*2)+1)*2)+1)*2)"), 94);
  EXPECT_EQ(Bytes("((((((((((7))))))))))"), 7);
}

TEST(FioExpression, MalformedExpressionsSayWhatIsWrong) {
  EXPECT_EQ(Error("(2*)"), "bad expression '(2*)': expected a number after '*'");
  EXPECT_EQ(Error("()"), "bad expression '()': expected a number after '('");
  EXPECT_EQ(Error("(1"), "bad expression '(1': expected ')'");
  EXPECT_EQ(Error("(2)(3)"), "bad expression '(2)(3)': unexpected '('");
  EXPECT_EQ(Error("(1)tib"), "bad expression '(1)tib': unexpected 'i'");
  EXPECT_EQ(Error("(2)x"), "bad expression '(2)x': unexpected 'x'");
  EXPECT_EQ(Error("(+3)"), "bad expression '(+3)': expected a number after '('");
  EXPECT_EQ(Error(""), "bad expression '': expected a number");
}

TEST(FioExpression, WhereFioCarriesOnSilentlyItIsAnError) {
  // fio yields the left operand for (10/0) and computes (5%2.0) as 5%2.
  EXPECT_THAT(Error("(10/0)"), HasSubstr("division by zero"));
  EXPECT_THAT(Error("(10/0.0)"), HasSubstr("division by zero"));
  EXPECT_THAT(Error("(10%0)"), HasSubstr("modulo by zero"));
  EXPECT_THAT(Error("(5%2.0)"), HasSubstr("modulo of a fraction"));
  EXPECT_THAT(Error("(0^-1)"), HasSubstr("zero to a negative power"));
  EXPECT_THAT(Error("(3000000000)"), HasSubstr("does not fit the 32-bit integer"));
  EXPECT_THAT(Error("(0x80000000)"), HasSubstr("does not fit the 32-bit integer"));
  EXPECT_THAT(Error("(2^63)"), HasSubstr("overflows 64 bits"));
  EXPECT_THAT(Error("(1024p*1024p)"), HasSubstr("overflows 64 bits"));
  // fio loops b times for a^b: a huge exponent must not hang.
  EXPECT_THAT(Error("(2^2147483647)"), HasSubstr("overflows 64 bits"));
  EXPECT_EQ(Bytes("(1^2147483647)"), 1);
  EXPECT_EQ(Bytes("((0-1)^2147483647)"), -1);
}

TEST(FioExpression, UnitsMustFitTheOptionsType) {
  EXPECT_THAT(Error("(2)k", FioUnits::kNone), HasSubstr("needs the option's type"));
  EXPECT_THAT(Error("(2s)", FioUnits::kBytes), HasSubstr("'s' is a time unit"));
  EXPECT_THAT(Error("(2k)", FioUnits::kTime), HasSubstr("'k' is a size unit"));
}

TEST(FioExpression, HostileInputIsBounded) {
  EXPECT_THAT(Error(std::string(998, '(')), HasSubstr("longer than the 997 characters"));
  const std::string deep = std::string(300, '(') + "1" + std::string(300, ')');
  EXPECT_THAT(Error(deep), HasSubstr("nests deeper than 256 levels"));
  EXPECT_THAT(Error(std::string(400, '-') + "1"), HasSubstr("nests deeper"));
}

TEST(FioExpression, ACommaColonOrHashEndsTheExpressionAsInFiosLexer) {
  EXPECT_EQ(Bytes("(1+2),(8)"), 3);
  EXPECT_EQ(Bytes("(1+2):junk"), 3);
}

TEST(FioExpression, ClassifyTellsExpressionsFromStrings) {
  EXPECT_EQ(ClassifyFioExpression("(2*3)"), ExpressionShape::kPlain);
  EXPECT_EQ(ClassifyFioExpression("(2*)"), ExpressionShape::kPlain);
  EXPECT_EQ(ClassifyFioExpression("(2)m"), ExpressionShape::kWithUnits);
  EXPECT_EQ(ClassifyFioExpression("(1m+30s)"), ExpressionShape::kWithUnits);
  EXPECT_EQ(ClassifyFioExpression("(a test)"), ExpressionShape::kNotExpression);
  EXPECT_EQ(ClassifyFioExpression("(hello)"), ExpressionShape::kNotExpression);
  EXPECT_EQ(ClassifyFioExpression("(1),(2)"), ExpressionShape::kNotExpression);
  EXPECT_EQ(ClassifyFioExpression("4k"), ExpressionShape::kNotExpression);
  EXPECT_EQ(ClassifyFioExpression(" (1)"), ExpressionShape::kNotExpression);
  EXPECT_EQ(ClassifyFioExpression(""), ExpressionShape::kNotExpression);
}

TEST(FioExpression, UnitWordsAreFiosLexerWords) {
  EXPECT_TRUE(IsFioExpressionUnit("m"));
  EXPECT_TRUE(IsFioExpressionUnit("KiB"));
  EXPECT_TRUE(IsFioExpressionUnit("MS"));
  EXPECT_FALSE(IsFioExpressionUnit("tib"));
  EXPECT_FALSE(IsFioExpressionUnit("ki"));
  EXPECT_FALSE(IsFioExpressionUnit(""));
}

}  // namespace
}  // namespace stormark::controller::fio
