#include "common/crc32c.h"

#include <string>

#include "common/random.h"
#include "gtest/gtest.h"

namespace stormark::common {
namespace {

TEST(Crc32c, MatchesTheStandardCheckValues) {
  EXPECT_EQ(Crc32c(0, "123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32cPortable(0, "123456789", 9), 0xE3069283u);
  // RFC 3720 B.4: 32 bytes of zeros, and of 0xff.
  const std::string zeros(32, '\0'), ones(32, '\xff');
  EXPECT_EQ(Crc32c(0, zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(0, ones.data(), 32), 0x62A8AB43u);
}

TEST(Crc32c, HardwareAndTableAgreeAtEveryLengthAndAlignment) {
  Xoshiro256 random(7);
  std::string data(5000, '\0');
  random.Fill(data.data(), data.size());
  for (size_t start = 0; start < 9; ++start) {
    for (size_t n : {0, 1, 7, 8, 9, 63, 64, 4095, 4096, 4991}) {
      EXPECT_EQ(Crc32c(0, data.data() + start, n), Crc32cPortable(0, data.data() + start, n))
          << start << " " << n;
    }
  }
}

TEST(Crc32c, ExtendsInPieces) {
  const std::string text = "stormark verifies what it wrote";
  const uint32_t whole = Crc32c(0, text.data(), text.size());
  EXPECT_EQ(Crc32c(Crc32c(0, text.data(), 10), text.data() + 10, text.size() - 10), whole);
}

}  // namespace
}  // namespace stormark::common
