#include "common/strings.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::common {
namespace {

using ::testing::ElementsAre;

TEST(StrCat, ConcatenatesStringsViewsAndNumbers) {
  const std::string s = "str";
  const std::string_view sv = "view";
  const absl::string_view av = "absl";
  EXPECT_EQ(StrCat(s, "-", sv, "-", av, "-", 42, "-", uint64_t{18446744073709551615u}, "-", -3),
            "str-view-absl-42-18446744073709551615--3");
}

TEST(StrCat, AbslViewWithEmbeddedNulKeepsItsLength) {
  const char data[] = {'a', '\0', 'b'};
  EXPECT_EQ(StrCat(absl::string_view(data, 3)).size(), 3u);
}

TEST(Trim, RemovesAsciiWhitespaceAtBothEnds) {
  EXPECT_EQ(Trim("  a b \t\n"), "a b");
  EXPECT_EQ(Trim("ab"), "ab");
  EXPECT_EQ(Trim(" \t "), "");
  EXPECT_EQ(Trim(""), "");
}

TEST(ToLower, LowersAsciiOnly) {
  EXPECT_EQ(ToLower("KiB MB x9"), "kib mb x9");
  EXPECT_EQ(ToLower(""), "");
}

TEST(Split, KeepsEmptyPieces) {
  EXPECT_THAT(Split("a,b,,c", ','), ElementsAre("a", "b", "", "c"));
  EXPECT_THAT(Split(",a,", ','), ElementsAre("", "a", ""));
  EXPECT_THAT(Split("", ','), ElementsAre(""));
  EXPECT_THAT(Split("abc", ','), ElementsAre("abc"));
}

}  // namespace
}  // namespace stormark::common
