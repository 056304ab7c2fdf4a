#include "common/log_text.h"

#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace stormark::common {
namespace {

using namespace std::string_literals;

TEST(LogSafe, KeepsPlainNamesAsTheyAre) {
  EXPECT_EQ(LogSafe("nightly-run_1.2"), "nightly-run_1.2");
  EXPECT_EQ(LogSafe(""), "");
  EXPECT_EQ(LogSafe("a b/c:d"), "a b/c:d");
}

TEST(LogSafe, EscapesNulNewlineCarriageReturnAndTab) {
  EXPECT_EQ(LogSafe("a\0b"s), "a\\x00b");
  EXPECT_EQ(LogSafe("nightly' on target 'prod'\n[peer x]"),
            "nightly\\x27 on target \\x27prod\\x27\\x0a[peer x]");
  EXPECT_EQ(LogSafe("a\r\tb"), "a\\x0d\\x09b");
}

TEST(LogSafe, EscapesTerminalSequencesAndDel) {
  EXPECT_EQ(LogSafe("\x1b[2J\x1b]0;title\x07"), "\\x1b[2J\\x1b]0;title\\x07");
  EXPECT_EQ(LogSafe("a\x7f"), "a\\x7f");
}

TEST(LogSafe, EscapesBackslashAndQuotesSoAValueCannotForgeAnEscape) {
  EXPECT_EQ(LogSafe("a\\x0ab"), "a\\\\x0ab");
  EXPECT_EQ(LogSafe("\"q\""), "\\x22q\\x22");
}

TEST(LogSafe, KeepsValidUtf8) {
  EXPECT_EQ(LogSafe("Grüße, 東京, \xF0\x9F\x98\x80"), "Grüße, 東京, \xF0\x9F\x98\x80");
}

TEST(LogSafe, EscapesEveryByteOfInvalidUtf8) {
  EXPECT_EQ(LogSafe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(LogSafe("a\x80z"), "a\\x80z");                         // A stray continuation byte.
  EXPECT_EQ(LogSafe("\xc3"), "\\xc3");                             // Cut short.
  EXPECT_EQ(LogSafe("\xc0\xaf"), "\\xc0\\xaf");                    // An overlong '/'.
  EXPECT_EQ(LogSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // A surrogate.
  EXPECT_EQ(LogSafe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // Past U+10FFFF.
}

TEST(LogSafe, EscapesC1ControlsLineSeparatorsAndBidiOverrides) {
  EXPECT_EQ(LogSafe("\xc2\x9b"
                    "2J"),
            "\\xc2\\x9b2J");  // CSI
  EXPECT_EQ(LogSafe("a\xe2\x80\xa8"
                    "b"),
            "a\\xe2\\x80\\xa8b");  // U+2028
  EXPECT_EQ(LogSafe("\xe2\x80\xae"
                    "abc"),
            "\\xe2\\x80\\xaeabc");  // U+202E
  EXPECT_EQ(LogSafe("\xe2\x81\xa6"
                    "x"),
            "\\xe2\\x81\\xa6x");  // U+2066
}

TEST(LogSafe, CutsAMebibyteToTheLimitAndSaysHowMuchIsLeft) {
  const std::string huge(1 << 20, 'a');
  const std::string safe = LogSafe(huge);
  EXPECT_EQ(safe, std::string(128, 'a') + "…(+1048448 bytes)");
  EXPECT_EQ(LogSafe(huge, 10), "aaaaaaaaaa…(+1048566 bytes)");
}

TEST(LogSafe, TheLimitCountsEscapesAndNeverSplitsOne) {
  const std::string nuls(1000, '\0');
  const std::string safe = LogSafe(nuls, 10);  // Two \x00 of 4 bytes fit, not a third.
  EXPECT_EQ(safe, "\\x00\\x00…(+998 bytes)");
  EXPECT_EQ(LogSafe("ab東京", 5), "ab東…(+3 bytes)");
  EXPECT_EQ(LogSafe(std::string(1 << 20, '\n')).find('\n'), std::string::npos);
}

TEST(LogSafe, AValueExactlyAtTheLimitHasNoMarker) {
  EXPECT_EQ(LogSafe("abcd", 4), "abcd");
  EXPECT_EQ(LogSafe("abcde", 4), "abcd…(+1 bytes)");
}

TEST(LogSafeLine, KeepsQuotesAndBackslashesButEscapesLineBreaks) {
  EXPECT_EQ(LogSafeLine("prepared phase 'a' \\ ok"), "prepared phase 'a' \\ ok");
  EXPECT_EQ(LogSafeLine("one\ntwo\0three"s), "one\\x0atwo\\x00three");
  EXPECT_EQ(LogSafeLine("\x1b[2J\xff"), "\\x1b[2J\\xff");
}

TEST(LogSafeLine, PassesWhatLogSafeRenderedUnchanged) {
  const std::string value = LogSafe("a'\n\\b\xff\x1b");
  EXPECT_EQ(LogSafeLine(value), value);
}

TEST(LogSafeLine, BoundsTheLine) {
  const std::string line = LogSafeLine(std::string(1 << 20, 'x'));
  EXPECT_EQ(line.size(), 2048 + std::string_view("…(+1046528 bytes)").size());
}

}  // namespace
}  // namespace stormark::common
