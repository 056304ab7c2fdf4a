#include "agent/devices/signatures.h"

#include <cstring>
#include <string>

#include "common/random.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A device image in memory.
class Image {
 public:
  explicit Image(size_t size) : data_(size, '\0') {}
  void Put(uint64_t offset, std::string_view bytes) {
    std::memcpy(data_.data() + offset, bytes.data(), bytes.size());
  }
  void Put16(uint64_t offset, uint16_t v) { Put(offset, {reinterpret_cast<char*>(&v), 2}); }
  void Put32(uint64_t offset, uint32_t v) { Put(offset, {reinterpret_cast<char*>(&v), 4}); }
  std::vector<std::string> Find() const {
    return FindSignatures(
        [this](uint64_t offset, size_t n, char* buf) {
          if (offset + n > data_.size()) return false;
          std::memcpy(buf, data_.data() + offset, n);
          return true;
        },
        data_.size());
  }
  std::string& data() { return data_; }

 private:
  std::string data_;
};

constexpr size_t kSize = 4 << 20;

TEST(Signatures, ZerosAndRandomDataHoldNone) {
  Image zeros(kSize);
  EXPECT_THAT(zeros.Find(), IsEmpty());
  // What stormark writes must never look like a filesystem: many random images.
  common::Xoshiro256 random(42);
  Image noise(kSize);
  for (int i = 0; i < 50; ++i) {
    random.Fill(noise.data().data(), noise.data().size());
    EXPECT_THAT(noise.Find(), IsEmpty()) << "seed round " << i;
  }
}

TEST(Signatures, Ext4SuperblockIsFound) {
  Image image(kSize);
  image.Put16(1024 + 56, 0xEF53);
  image.Put16(1024 + 58, 1);           // clean
  image.Put32(1024 + 24, 2);           // 4 KiB blocks
  image.Put32(1024 + 76, 1);           // dynamic revision
  image.Put32(1024 + 96, 0x40 | 0x2);  // extents, filetype
  EXPECT_THAT(image.Find(), ElementsAre("ext4 filesystem"));
}

TEST(Signatures, BareExtMagicWithInsaneFieldsIsNotAFilesystem) {
  Image image(kSize);
  image.Put16(1024 + 56, 0xEF53);  // Random data hits two bytes often enough.
  image.Put32(1024 + 24, 77);
  EXPECT_THAT(image.Find(), IsEmpty());
}

TEST(Signatures, FindsEachKnownMagic) {
  const struct {
    uint64_t offset;
    std::string bytes;
    std::string name;
  } cases[] = {
      {0, "XFSB", "XFS filesystem"},
      {65536 + 64, "_BHRfS_M", "btrfs filesystem"},
      {4086, "SWAPSPACE2", "swap space"},
      {512, "EFI PART", "GPT partition table"},
      {512, "LABELONE", "LVM2 physical volume"},
      {0, std::string("LUKS\xba\xbe", 6), "LUKS encrypted volume"},
      {4096, std::string("\xfc\x4e\x2b\xa9", 4), "Linux RAID (md) superblock 1.2"},
      {kSize - 64 * 1024, std::string("\xfc\x4e\x2b\xa9", 4), "Linux RAID (md) superblock 0.90"},
  };
  for (const auto& c : cases) {
    Image image(kSize);
    image.Put(c.offset, c.bytes);
    EXPECT_THAT(image.Find(), ElementsAre(c.name)) << c.name;
  }
}

TEST(Signatures, MbrNeedsPlausiblePartitionEntries) {
  Image image(kSize);
  image.Put(510, "\x55\xaa");
  EXPECT_THAT(image.Find(), ElementsAre("MBR partition table (or boot sector)"));
  image.Put(446, "\x42");  // A boot flag that is neither 0x00 nor 0x80.
  EXPECT_THAT(image.Find(), IsEmpty());
}

}  // namespace
}  // namespace stormark::agent
