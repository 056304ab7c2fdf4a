#include "controller/report/html/markup.h"

#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

TEST(EscapeMarkup, EscapesEveryCharacterThatEndsTextOrAnAttribute) {
  EXPECT_EQ(EscapeMarkup("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
}

TEST(EscapeMarkup, LeavesPlainTextAndUtf8Alone) {
  EXPECT_EQ(EscapeMarkup("db1:7420 / scratch \xC3\xA9t\xC3\xA9"),
            "db1:7420 / scratch \xC3\xA9t\xC3\xA9");
  EXPECT_EQ(EscapeMarkup("a\tb\nc"), "a\tb\nc");
}

TEST(EscapeMarkup, ReplacesControlCharactersXmlCannotCarry) {
  EXPECT_EQ(EscapeMarkup(std::string("a\x01"
                                     "b\x1b",
                                     4)),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
}

}  // namespace
}  // namespace stormark::controller
