#include "agent/devices/aoe/aoe_frame.h"

#include <vector>

#include "gtest/gtest.h"

namespace stormark::agent::aoe {
namespace {

TEST(AoeFrame, AtaHeaderRoundTripsWithTheSpecLayout) {
  Header h;
  h.dst = {1, 2, 3, 4, 5, 6};
  h.src = {7, 8, 9, 10, 11, 12};
  h.flags = kFlagResponse;
  h.error = 0;
  h.shelf = 0x1234;
  h.slot = 7;
  h.command = kCommandAta;
  h.tag = 0xa1b2c3d4;
  AtaArg ata{kAtaExtended | kAtaWrite, 0, 2, kAtaWriteExt, 0x0000123456789abcULL};
  std::array<uint8_t, kAtaHeaderSize> frame;
  EncodeAta(h, ata, frame);
  EXPECT_EQ(frame[12], 0x88);
  EXPECT_EQ(frame[13], 0xa2);
  EXPECT_EQ(frame[14], 0x18);  // version 1, response flag
  EXPECT_EQ(frame[16], 0x12);  // shelf, big-endian
  EXPECT_EQ(frame[17], 0x34);
  EXPECT_EQ(frame[18], 7);
  EXPECT_EQ(frame[20], 0xa1);  // the tag's first byte is the session byte
  EXPECT_EQ(frame[24], 0x41);
  EXPECT_EQ(frame[27], 0x34);
  EXPECT_EQ(frame[28], 0xbc);  // lba0 first
  EXPECT_EQ(frame[33], 0x12);  // lba5

  Header back;
  AtaArg ata_back;
  ASSERT_TRUE(ParseHeader(frame, &back));
  ASSERT_TRUE(ParseAta(frame, &ata_back));
  EXPECT_EQ(back.dst, h.dst);
  EXPECT_EQ(back.src, h.src);
  EXPECT_EQ(back.flags, kFlagResponse);
  EXPECT_EQ(back.shelf, 0x1234);
  EXPECT_EQ(back.slot, 7);
  EXPECT_EQ(back.tag, 0xa1b2c3d4u);
  EXPECT_EQ(ata_back.lba, 0x0000123456789abcULL);
  EXPECT_EQ(ata_back.sector_count, 2);
}

TEST(AoeFrame, RejectsShortAndForeignFrames) {
  std::array<uint8_t, kAtaHeaderSize> frame{};
  EncodeAta(Header{}, AtaArg{}, frame);
  Header h;
  EXPECT_FALSE(ParseHeader(std::span(frame).first(20), &h));
  AtaArg ata;
  EXPECT_FALSE(ParseAta(std::span(frame).first(30), &ata));
  frame[14] = 0x20;  // version 2
  EXPECT_FALSE(ParseHeader(frame, &h));
  frame[14] = 0x10;
  frame[13] = 0x00;  // another ethertype
  EXPECT_FALSE(ParseHeader(frame, &h));
}

TEST(AoeFrame, QueryConfigReplyGivesBuffersFirmwareAndSectors) {
  std::vector<uint8_t> frame(kConfigHeaderSize + 3);
  EncodeQueryConfig(Header{},
                    std::span<uint8_t, kConfigHeaderSize>(frame.data(), kConfigHeaderSize));
  frame[24] = 0;
  frame[25] = 16;
  frame[26] = 0x40;
  frame[27] = 0x19;
  frame[28] = 17;
  frame[29] = 0x10;
  frame[31] = 3;
  frame[32] = 'a';
  frame[33] = 'b';
  frame[34] = 'c';
  ConfigArg config;
  ASSERT_TRUE(ParseConfig(frame, &config));
  EXPECT_EQ(config.buffer_count, 16);
  EXPECT_EQ(config.firmware, 0x4019);
  EXPECT_EQ(config.sector_count, 17);
  EXPECT_EQ(config.version, 1);
  EXPECT_EQ(config.config, "abc");
  frame.pop_back();  // the string is cut off
  EXPECT_FALSE(ParseConfig(frame, &config));
}

TEST(AoeFrame, SectorsPerFrameFollowTheMtu) {
  EXPECT_EQ(SectorsPerFrame(1500), 2u);
  EXPECT_EQ(SectorsPerFrame(9000), 17u);
  EXPECT_EQ(SectorsPerFrame(500), 0u);
  EXPECT_EQ(SectorsPerFrame(1 << 20), 255u);
}

TEST(AoeFrame, IdentifyGivesTheLba48CapacityAndModel) {
  std::vector<uint8_t> data(512, 0);
  auto word = [&](int w, uint16_t v) {
    data[2 * w] = static_cast<uint8_t>(v);
    data[2 * w + 1] = static_cast<uint8_t>(v >> 8);
  };
  word(83, 0x5400);
  word(100, 0x5678);
  word(101, 0x1234);
  word(102, 0x0001);
  word(60, 0xffff);
  word(61, 0x0fff);
  const std::string model = "Coraid EtherDrive vblade";
  for (size_t i = 0; i + 1 < model.size(); i += 2) {
    data[54 + i] = static_cast<uint8_t>(model[i + 1]);
    data[55 + i] = static_cast<uint8_t>(model[i]);
  }
  auto id = ParseIdentify(data);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_TRUE(id->lba48);
  EXPECT_EQ(id->sectors, 0x000112345678ULL);
  EXPECT_EQ(id->model, model);

  word(83, 0x4000);  // no LBA48: the LBA28 count
  id = ParseIdentify(data);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->sectors, 0x0fffffffULL);
  EXPECT_FALSE(ParseIdentify(std::span(data).first(100)).ok());
}

TEST(AoeFrame, ErrorsAreSpelledOut) {
  EXPECT_EQ(AoeErrorText(2), "bad argument parameter (AoE error 2)");
  EXPECT_EQ(AoeErrorText(6), "target is reserved by another initiator (AoE error 6)");
  EXPECT_EQ(AtaErrorText(0x51, 0x10),
            "ATA status 0x51 (DRDY ERR), error 0x10 (IDNF: sector not found)");
  EXPECT_EQ(AtaErrorText(0x40, 0x00), "ATA status 0x40 (DRDY)");
  EXPECT_TRUE(AtaFailed(0x51));
  EXPECT_TRUE(AtaFailed(0x60));  // device fault
  EXPECT_FALSE(AtaFailed(0x40));
  EXPECT_FALSE(AtaFailed(0x00));  // vblade answers FLUSH CACHE with status 0
}

}  // namespace
}  // namespace stormark::agent::aoe
