#include "common/units.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::common {
namespace {

using ::testing::HasSubstr;

uint64_t SizeOf(std::string_view text) {
  StatusOr<uint64_t> size = ParseSize(text);
  EXPECT_TRUE(size.ok()) << text << ": " << size.status();
  return size.ok() ? *size : 0;
}

int64_t NanosOf(std::string_view text) {
  StatusOr<int64_t> nanos = ParseDurationNanos(text);
  EXPECT_TRUE(nanos.ok()) << text << ": " << nanos.status();
  return nanos.ok() ? *nanos : -1;
}

TEST(ParseSize, BareNumberIsBytes) {
  EXPECT_EQ(SizeOf("0"), 0u);
  EXPECT_EQ(SizeOf("1536"), 1536u);
  EXPECT_EQ(SizeOf("17B"), 17u);
  EXPECT_EQ(SizeOf("  4096  "), 4096u);
}

TEST(ParseSize, SingleLetterSuffixesAreBinary) {
  EXPECT_EQ(SizeOf("4k"), 4096u);
  EXPECT_EQ(SizeOf("4K"), 4096u);
  EXPECT_EQ(SizeOf("1M"), uint64_t{1} << 20);
  EXPECT_EQ(SizeOf("10G"), uint64_t{10} << 30);
  EXPECT_EQ(SizeOf("2T"), uint64_t{2} << 40);
  EXPECT_EQ(SizeOf("3P"), uint64_t{3} << 50);
}

TEST(ParseSize, IbSuffixesAreBinary) {
  EXPECT_EQ(SizeOf("1KiB"), 1024u);
  EXPECT_EQ(SizeOf("10GiB"), uint64_t{10} << 30);
  EXPECT_EQ(SizeOf("1mib"), uint64_t{1} << 20);
}

TEST(ParseSize, BSuffixesAreDecimal) {
  EXPECT_EQ(SizeOf("1KB"), 1000u);
  EXPECT_EQ(SizeOf("1MB"), 1'000'000u);
  EXPECT_EQ(SizeOf("2GB"), 2'000'000'000u);
  EXPECT_EQ(SizeOf("1TB"), 1'000'000'000'000u);
  EXPECT_EQ(SizeOf("1PB"), 1'000'000'000'000'000u);
}

TEST(ParseSize, SpaceBetweenNumberAndUnitIsAllowed) { EXPECT_EQ(SizeOf("4 KiB"), 4096u); }

TEST(ParseSize, FractionWithSuffix) {
  EXPECT_EQ(SizeOf("1.5G"), uint64_t{3} << 29);
  EXPECT_EQ(SizeOf("0.5k"), 512u);
}

TEST(ParseSize, RejectsFractionalByteCounts) {
  EXPECT_FALSE(ParseSize("1.5").ok());
  EXPECT_FALSE(ParseSize("1.5B").ok());
  // 1.1 KiB is 1126.4 bytes.
  EXPECT_FALSE(ParseSize("1.1k").ok());
}

TEST(ParseSize, UnknownUnitErrorNamesInputAndAcceptedUnits) {
  StatusOr<uint64_t> size = ParseSize("10X");
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(size.status().message(), HasSubstr("'10X'"));
  EXPECT_THAT(size.status().message(), HasSubstr("unknown unit 'X'"));
  EXPECT_THAT(size.status().message(), HasSubstr("k, M, G, T"));
}

TEST(ParseSize, RejectsMalformedInput) {
  for (const char* bad : {"", "   ", "-1", "-4k", "k", "abc", ".5k", "5.k", "1..5k", "1.2.3k",
                          "4kk", "4 k b", "0x10"}) {
    StatusOr<uint64_t> size = ParseSize(bad);
    EXPECT_FALSE(size.ok()) << "'" << bad << "' parsed as " << *size;
    if (!size.ok()) {
      EXPECT_EQ(size.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(ParseSize, RejectsValuesBeyondUint64) {
  EXPECT_FALSE(ParseSize("16384P").ok());
  EXPECT_FALSE(ParseSize("18446744073709551616").ok());
  EXPECT_FALSE(ParseSize("99999999999999999999999").ok());
}

TEST(ParseSize, LargeWholeByteCountsAreExact) {
  // Above 2^53 a double cannot hold every integer.
  EXPECT_EQ(SizeOf("9007199254740993"), uint64_t{9007199254740993u});
  EXPECT_EQ(SizeOf("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(SizeOf("9007199254740993k"), uint64_t{9007199254740993u} * 1024);
}

TEST(ParseSize, LargeWholeCountsWithSuffixOverflowIsAnError) {
  EXPECT_FALSE(ParseSize("18446744073709551615k").ok());
  EXPECT_FALSE(ParseSize("18014398509481984k").ok());  // 2^54 KiB = 2^64 bytes.
  EXPECT_EQ(SizeOf("18014398509481983k"), (uint64_t{18014398509481983u}) * 1024);
}

TEST(ParseDurationNanos, Units) {
  EXPECT_EQ(NanosOf("100ns"), 100);
  EXPECT_EQ(NanosOf("2us"), 2'000);
  EXPECT_EQ(NanosOf("250ms"), 250'000'000);
  EXPECT_EQ(NanosOf("10s"), 10'000'000'000);
  EXPECT_EQ(NanosOf("10sec"), 10'000'000'000);
  EXPECT_EQ(NanosOf("5m"), 300'000'000'000);
  EXPECT_EQ(NanosOf("2min"), 120'000'000'000);
  EXPECT_EQ(NanosOf("1h"), 3'600'000'000'000);
  EXPECT_EQ(NanosOf("500MS"), 500'000'000);
}

TEST(ParseDurationNanos, BareNumberIsSeconds) {
  EXPECT_EQ(NanosOf("3"), 3'000'000'000);
  EXPECT_EQ(NanosOf("0"), 0);
}

TEST(ParseDurationNanos, FractionsAreAllowed) {
  EXPECT_EQ(NanosOf("1.5s"), 1'500'000'000);
  EXPECT_EQ(NanosOf("0.25"), 250'000'000);
  EXPECT_EQ(NanosOf("1.5us"), 1'500);
}

TEST(ParseDurationNanos, UnknownUnitErrorNamesInputAndUnits) {
  StatusOr<int64_t> nanos = ParseDurationNanos("10d");
  ASSERT_FALSE(nanos.ok());
  EXPECT_EQ(nanos.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(nanos.status().message(), HasSubstr("'10d'"));
  EXPECT_THAT(nanos.status().message(), HasSubstr("ns, us, ms, s, m or h"));
}

TEST(ParseDurationNanos, RejectsMalformedInput) {
  for (const char* bad : {"", "-1s", "ms", ".5s", "1.s", "1e3", "fast", "1 2s"}) {
    EXPECT_FALSE(ParseDurationNanos(bad).ok()) << "'" << bad << "'";
  }
}

TEST(ParseDurationNanos, RejectsValuesThatDoNotFitInt64) {
  EXPECT_FALSE(ParseDurationNanos("1000000000h").ok());
  // INT64_MAX rounds up to 2^63 as a double, one past the largest int64.
  StatusOr<int64_t> edge = ParseDurationNanos("9223372036854775807ns");
  EXPECT_FALSE(edge.ok()) << *edge;
  EXPECT_FALSE(ParseDurationNanos("9223372036854775808ns").ok());
}

TEST(ParseDurationNanos, NeverReturnsANegativeDuration) {
  for (const char* text : {"9223372036854775807ns", "9223372036.854775807s", "2562047.8h"}) {
    StatusOr<int64_t> nanos = ParseDurationNanos(text);
    if (nanos.ok()) {
      EXPECT_GE(*nanos, 0) << text;
    }
  }
}

TEST(FormatBytes, PicksLargestBinaryUnitWithAtLeastOne) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(17), "17 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(4096), "4 KiB");
  EXPECT_EQ(FormatBytes(512u << 20), "512 MiB");
}

TEST(FormatBytes, FractionsHaveThreeSignificantDigits) {
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes((uint64_t{1} << 30) + (uint64_t{1} << 28)), "1.25 GiB");
  EXPECT_EQ(FormatBytes((uint64_t{10} << 40) + (uint64_t{1} << 39)), "10.5 TiB");
  EXPECT_EQ(FormatBytes((uint64_t{100} << 20) + (uint64_t{1} << 18)), "100 MiB");
}

TEST(FormatSizeShort, UsesLargestExactUnit) {
  EXPECT_EQ(FormatSizeShort(0), "0");
  EXPECT_EQ(FormatSizeShort(1536), "1536");
  EXPECT_EQ(FormatSizeShort(4096), "4k");
  EXPECT_EQ(FormatSizeShort(uint64_t{1} << 30), "1G");
  EXPECT_EQ(FormatSizeShort(uint64_t{3} << 20), "3M");
  EXPECT_EQ(FormatSizeShort(uint64_t{1} << 60), "1024P");
}

TEST(FormatSizeShort, ParseSizeReadsItBack) {
  for (uint64_t bytes :
       {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{1536}, uint64_t{4096},
        uint64_t{65536 + 1}, uint64_t{7} << 20, uint64_t{5} << 30, uint64_t{1} << 50,
        uint64_t{1} << 63, (uint64_t{1} << 53) + 1, UINT64_MAX - 1, UINT64_MAX}) {
    StatusOr<uint64_t> parsed = ParseSize(FormatSizeShort(bytes));
    ASSERT_TRUE(parsed.ok()) << FormatSizeShort(bytes) << ": " << parsed.status();
    EXPECT_EQ(*parsed, bytes) << FormatSizeShort(bytes);
  }
}

TEST(FormatDurationNanos, ThreeSignificantDigits) {
  EXPECT_EQ(FormatDurationNanos(812), "812 ns");
  EXPECT_EQ(FormatDurationNanos(45'600), "45.6 us");
  EXPECT_EQ(FormatDurationNanos(1'234'000), "1.23 ms");
  EXPECT_EQ(FormatDurationNanos(2.5e9), "2.50 s");
  EXPECT_EQ(FormatDurationNanos(150e9), "150 s");
}

TEST(FormatRate, MiBPerSecond) {
  EXPECT_EQ(FormatRate(512.0 * 1024 * 1024), "512 MiB/s");
  EXPECT_EQ(FormatRate(1.23 * 1024 * 1024), "1.23 MiB/s");
  EXPECT_EQ(FormatRate(0), "0 MiB/s");
}

}  // namespace
}  // namespace stormark::common
