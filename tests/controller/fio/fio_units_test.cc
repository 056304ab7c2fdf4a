#include "controller/fio/fio_units.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller::fio {
namespace {

using ::testing::HasSubstr;

// Expected values are what fio 3.42 reports for size= and runtime=/thinktime= under
// `fio --parse-only --debug=parse` (and fio 3.33 for the forms without parentheses).
uint64_t Size(std::string_view text, int kb_base = 1024) {
  auto size = ParseFioSize(text, kb_base);
  EXPECT_TRUE(size.ok()) << text << ": " << size.status();
  EXPECT_FALSE(size.ok() && size->percent) << text;
  return size.ok() ? size->value : 0;
}

bool Ambiguous(std::string_view text, int kb_base) {
  auto size = ParseFioSize(text, kb_base);
  EXPECT_TRUE(size.ok()) << text << ": " << size.status();
  return size.ok() && size->ambiguous_unit;
}

std::string SizeError(std::string_view text, int kb_base = 1024) {
  auto size = ParseFioSize(text, kb_base);
  EXPECT_FALSE(size.ok()) << text << " gave " << (size.ok() ? size->value : 0);
  return std::string(size.status().message());
}

int64_t Nanos(std::string_view text, std::string_view default_unit = "s") {
  auto nanos = ParseFioTimeNanos(text, default_unit);
  EXPECT_TRUE(nanos.ok()) << text << ": " << nanos.status();
  return nanos.ok() ? *nanos : -1;
}

std::string TimeError(std::string_view text, std::string_view default_unit = "s") {
  auto nanos = ParseFioTimeNanos(text, default_unit);
  EXPECT_FALSE(nanos.ok()) << text << " gave " << (nanos.ok() ? *nanos : 0);
  return std::string(nanos.status().message());
}

TEST(FioSize, KbBase1024ReadsSiPrefixesAsBinaryAndIecPrefixesAsDecimal) {
  EXPECT_EQ(Size("4096"), 4096u);
  EXPECT_EQ(Size("4096b"), 4096u);
  EXPECT_EQ(Size("4096B"), 4096u);
  EXPECT_EQ(Size("4k"), 4096u);
  EXPECT_EQ(Size("4K"), 4096u);
  EXPECT_EQ(Size("4kb"), 4096u);
  EXPECT_EQ(Size("4KB"), 4096u);
  EXPECT_EQ(Size("4ki"), 4096u);
  EXPECT_EQ(Size("4kib"), 4000u);
  EXPECT_EQ(Size("4KiB"), 4000u);
  EXPECT_EQ(Size("1m"), 1048576u);
  EXPECT_EQ(Size("1mib"), 1000000u);
  EXPECT_EQ(Size("1g"), 1073741824u);
  EXPECT_EQ(Size("10G"), 10737418240u);
  EXPECT_EQ(Size("1t"), 1099511627776u);
  EXPECT_EQ(Size("1tib"), 1000000000000u);
  EXPECT_EQ(Size("1p"), 1125899906842624u);
  EXPECT_EQ(Size("0x1000"), 4096u);
}

TEST(FioSize, KbBase1000ReadsThemAsTheStandardsDo) {
  EXPECT_EQ(Size("4k", 1000), 4000u);
  EXPECT_EQ(Size("4kb", 1000), 4000u);
  EXPECT_EQ(Size("4KB", 1000), 4000u);
  EXPECT_EQ(Size("4ki", 1000), 4000u);  // fio's code, though its HOWTO says 4096
  EXPECT_EQ(Size("4kib", 1000), 4096u);
  EXPECT_EQ(Size("4KiB", 1000), 4096u);
  EXPECT_EQ(Size("1m", 1000), 1000000u);
  EXPECT_EQ(Size("1mib", 1000), 1048576u);
  EXPECT_EQ(Size("1g", 1000), 1000000000u);
  EXPECT_EQ(Size("4096b", 1000), 4096u);
}

TEST(FioSize, UnitsThatReadOtherwiseThanTheirStandardAreFlagged) {
  EXPECT_FALSE(Ambiguous("4k", 1024));
  EXPECT_TRUE(Ambiguous("4KB", 1024));
  EXPECT_TRUE(Ambiguous("4KiB", 1024));
  EXPECT_TRUE(Ambiguous("4Ki", 1024));
  EXPECT_FALSE(Ambiguous("4096", 1024));
  EXPECT_FALSE(Ambiguous("4k", 1000));
  EXPECT_FALSE(Ambiguous("4KB", 1000));
  EXPECT_FALSE(Ambiguous("4KiB", 1000));
  EXPECT_TRUE(Ambiguous("4Ki", 1000));
  EXPECT_TRUE(Ambiguous("(4)kb", 1024));
  EXPECT_FALSE(Ambiguous("(4)k", 1024));
}

TEST(FioSize, ExpressionsUseFiosGrammarAndIgnoreKbBase) {
  EXPECT_EQ(Size("(2*1024)m"), 2147483648u);
  EXPECT_EQ(Size("(2*1024)m", 1000), 2147483648u);
  EXPECT_EQ(Size("(2)k", 1000), 2048u);
  EXPECT_EQ(Size("(1)+(2)k"), 2049u);
  EXPECT_EQ(Size("(1.5*1024)m"), 1610612736u);
  EXPECT_EQ(Size("(2*3)"), 6u);
}

TEST(FioSize, APercentageIsADistinctResult) {
  auto size = ParseFioSize("50%", 1024);
  ASSERT_TRUE(size.ok()) << size.status();
  EXPECT_TRUE(size->percent);
  EXPECT_EQ(size->value, 50u);
  EXPECT_THAT(SizeError("0%"), HasSubstr("from 1 to 100"));
  EXPECT_THAT(SizeError("101%"), HasSubstr("from 1 to 100"));
}

TEST(FioSize, FormsFioMisreadsAreErrorsThatSaySo) {
  EXPECT_EQ(SizeError("1.5g"),
            "bad size '1.5g': fio stops at the '.' and reads 1 bytes; a fraction needs an "
            "expression such as (1.5*1024)m");
  EXPECT_THAT(SizeError(" 4k"), HasSubstr("fio ignores the unit after a leading blank"));
  EXPECT_THAT(SizeError("0x10k"), HasSubstr("fio ignores a unit after a hex number"));
  EXPECT_THAT(SizeError("4x"), HasSubstr("unknown unit 'x', which fio would ignore"));
  EXPECT_THAT(SizeError("4q"), HasSubstr("unknown unit 'q'"));
  EXPECT_THAT(SizeError("4kbytes"), HasSubstr("unknown unit"));
  EXPECT_THAT(SizeError("(10-2)"), HasSubstr("splits a numeric value at '-'"));
  EXPECT_THAT(SizeError("(4*1024*1024*1024)"), HasSubstr("32-bit int"));
  EXPECT_THAT(SizeError("(1/0)"), HasSubstr("division by zero"));
  EXPECT_THAT(SizeError("(2s)"), HasSubstr("time unit"));
  EXPECT_THAT(SizeError("4k-8k"), HasSubstr("range"));
  EXPECT_THAT(SizeError("4k,8k"), HasSubstr("list or a range"));
  EXPECT_THAT(SizeError("-4k"), HasSubstr("negative"));
  EXPECT_THAT(SizeError(""), HasSubstr("empty"));
  EXPECT_THAT(SizeError("k"), HasSubstr("expected a number"));
  EXPECT_THAT(SizeError("10z"), HasSubstr("zones"));
  EXPECT_THAT(SizeError("16777216p"), HasSubstr("too large"));
  EXPECT_THAT(SizeError("99999999999999999999"), HasSubstr("too large"));
  EXPECT_THAT(SizeError("4k", 512), HasSubstr("kb_base must be 1024 or 1000"));
}

TEST(FioTime, ABareNumberTakesTheDefaultUnit) {
  EXPECT_EQ(Nanos("10"), 10000000000);
  EXPECT_EQ(Nanos("10", "us"), 10000);
  EXPECT_THAT(TimeError("10", "ms"), HasSubstr("'s' or 'us'"));
}

TEST(FioTime, SuffixesAreCaseInsensitive) {
  EXPECT_EQ(Nanos("10s"), 10000000000);
  EXPECT_EQ(Nanos("10S"), 10000000000);
  EXPECT_EQ(Nanos("2m"), 120000000000);
  EXPECT_EQ(Nanos("1h"), 3600000000000);
  EXPECT_EQ(Nanos("1d"), 86400000000000);
  EXPECT_EQ(Nanos("10ms"), 10000000);
  EXPECT_EQ(Nanos("10msec"), 10000000);
  EXPECT_EQ(Nanos("10MS"), 10000000);
  EXPECT_EQ(Nanos("10us"), 10000);
  EXPECT_EQ(Nanos("10usec"), 10000);
  EXPECT_EQ(Nanos("1500ms"), 1500000000);
}

TEST(FioTime, ExpressionsAreTruncatedToSecondsForSecondOptions) {
  EXPECT_EQ(Nanos("(1500ms)"), 1000000000);  // fio 3.42: runtime=(1500ms) is 1 s
  EXPECT_EQ(Nanos("(1500)ms"), 1000000000);
  EXPECT_EQ(Nanos("(1500)ms", "us"), 1500000000);  // thinktime=(1500)ms is 1.5 s
  EXPECT_EQ(Nanos("(90)s"), 90000000000);
  EXPECT_EQ(Nanos("(1m+30s)"), 90000000000);
  EXPECT_EQ(Nanos("(10)"), 10000000000);
  EXPECT_EQ(Nanos("(10)", "us"), 10000);
  EXPECT_EQ(Nanos("(2147)"), 2147000000000);
  EXPECT_THAT(TimeError("(2148)"), HasSubstr("overflows above 2147 s; add a unit: (3600)s"));
  EXPECT_EQ(Nanos("(3600)s"), 3600000000000);
  EXPECT_THAT(TimeError("(2k)"), HasSubstr("size unit"));
}

TEST(FioTime, FormsFioMisreadsAreErrorsThatSaySo) {
  EXPECT_EQ(TimeError("10sec"),
            "bad time '10sec': fio's HOWTO lists 'sec', but fio reads it as microseconds; write "
            "10s");
  EXPECT_THAT(TimeError("10min"), HasSubstr("write 10m"));
  EXPECT_THAT(TimeError("10ns"), HasSubstr("unknown unit 'ns', which fio reads as microseconds"));
  EXPECT_THAT(TimeError("10x"), HasSubstr("unknown unit"));
  EXPECT_THAT(TimeError("1.5s"), HasSubstr("fio stops at the '.'"));
  EXPECT_THAT(TimeError("0x10"), HasSubstr("hex"));
  EXPECT_THAT(TimeError(" 2m"), HasSubstr("leading blank"));
  EXPECT_THAT(TimeError("1-2"), HasSubstr("range"));
  EXPECT_THAT(TimeError("-1"), HasSubstr("negative"));
  EXPECT_THAT(TimeError("99999999999d"), HasSubstr("too large"));
}

}  // namespace
}  // namespace stormark::controller::fio
