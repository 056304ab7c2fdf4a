#include "agent/devices/aoe/aoe_frame.h"

#include <algorithm>
#include <cstring>

#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::agent::aoe {
namespace {

void Put16(uint8_t* at, uint16_t v) {
  at[0] = static_cast<uint8_t>(v >> 8);
  at[1] = static_cast<uint8_t>(v);
}

uint16_t Get16(const uint8_t* at) { return static_cast<uint16_t>(at[0] << 8 | at[1]); }

// A word of IDENTIFY data: little-endian.
uint16_t Word(std::span<const uint8_t> data, size_t index) {
  return static_cast<uint16_t>(data[2 * index] | data[2 * index + 1] << 8);
}

// An ATA string: each word holds two characters, the first in its high byte.
std::string AtaString(std::span<const uint8_t> data, size_t first_word, size_t words) {
  std::string s;
  for (size_t w = first_word; w < first_word + words; ++w) {
    s.push_back(static_cast<char>(data[2 * w + 1]));
    s.push_back(static_cast<char>(data[2 * w]));
  }
  for (char& c : s) {
    if (c < 0x20 || c > 0x7e) c = ' ';
  }
  return std::string(common::Trim(s));
}

}  // namespace

void EncodeHeader(const Header& header, std::span<uint8_t, kAoeHeaderSize> out) {
  uint8_t* p = out.data();
  std::memcpy(p, header.dst.data(), 6);
  std::memcpy(p + 6, header.src.data(), 6);
  Put16(p + 12, kEtherType);
  p[14] = static_cast<uint8_t>(kVersion << 4 | (header.flags & 0x0f));
  p[15] = header.error;
  Put16(p + 16, header.shelf);
  p[18] = header.slot;
  p[19] = header.command;
  Put16(p + 20, static_cast<uint16_t>(header.tag >> 16));
  Put16(p + 22, static_cast<uint16_t>(header.tag));
}

void EncodeAta(const Header& header, const AtaArg& ata, std::span<uint8_t, kAtaHeaderSize> out) {
  EncodeHeader(header, out.first<kAoeHeaderSize>());
  uint8_t* p = out.data() + kAoeHeaderSize;
  p[0] = ata.aflags;
  p[1] = ata.err_feature;
  p[2] = ata.sector_count;
  p[3] = ata.cmd_status;
  for (int i = 0; i < 6; ++i) p[4 + i] = static_cast<uint8_t>(ata.lba >> (8 * i));
  p[10] = 0;
  p[11] = 0;
}

void EncodeQueryConfig(const Header& header, std::span<uint8_t, kConfigHeaderSize> out) {
  EncodeHeader(header, out.first<kAoeHeaderSize>());
  std::memset(out.data() + kAoeHeaderSize, 0, kConfigHeaderSize - kAoeHeaderSize);
}

bool ParseHeader(std::span<const uint8_t> frame, Header* header) {
  if (frame.size() < kAoeHeaderSize) return false;
  const uint8_t* p = frame.data();
  if (Get16(p + 12) != kEtherType || (p[14] >> 4) != kVersion) return false;
  std::memcpy(header->dst.data(), p, 6);
  std::memcpy(header->src.data(), p + 6, 6);
  header->flags = p[14] & 0x0f;
  header->error = p[15];
  header->shelf = Get16(p + 16);
  header->slot = p[18];
  header->command = p[19];
  header->tag = uint32_t{Get16(p + 20)} << 16 | Get16(p + 22);
  return true;
}

bool ParseAta(std::span<const uint8_t> frame, AtaArg* ata) {
  if (frame.size() < kAtaHeaderSize) return false;
  const uint8_t* p = frame.data() + kAoeHeaderSize;
  ata->aflags = p[0];
  ata->err_feature = p[1];
  ata->sector_count = p[2];
  ata->cmd_status = p[3];
  ata->lba = 0;
  for (int i = 0; i < 6; ++i) ata->lba |= uint64_t{p[4 + i]} << (8 * i);
  return true;
}

bool ParseConfig(std::span<const uint8_t> frame, ConfigArg* config) {
  if (frame.size() < kConfigHeaderSize) return false;
  const uint8_t* p = frame.data() + kAoeHeaderSize;
  config->buffer_count = Get16(p);
  config->firmware = Get16(p + 2);
  config->sector_count = p[4];
  config->version = p[5] >> 4;
  config->ccmd = p[5] & 0x0f;
  const uint16_t length = Get16(p + 6);
  if (frame.size() < kConfigHeaderSize + length) return false;
  config->config.assign(reinterpret_cast<const char*>(p + 8), length);
  return true;
}

std::string AoeErrorText(uint8_t code) {
  const char* text = "unknown error";
  switch (code) {
    case 1:
      text = "unrecognized command code";
      break;
    case 2:
      text = "bad argument parameter";
      break;
    case 3:
      text = "device unavailable";
      break;
    case 4:
      text = "config string present";
      break;
    case 5:
      text = "unsupported version";
      break;
    case 6:
      text = "target is reserved by another initiator";
      break;
  }
  return common::StrCat(text, " (AoE error ", code, ")");
}

std::string AtaErrorText(uint8_t status, uint8_t error) {
  static constexpr std::pair<uint8_t, const char*> kStatusBits[] = {
      {0x80, "BSY"}, {0x40, "DRDY"}, {0x20, "DF"}, {0x08, "DRQ"}, {0x01, "ERR"}};
  static constexpr std::pair<uint8_t, const char*> kErrorBits[] = {
      {0x80, "ICRC: interface CRC error"},
      {0x40, "UNC: uncorrectable data"},
      {0x20, "MC: media changed"},
      {0x10, "IDNF: sector not found"},
      {0x08, "MCR: media change request"},
      {0x04, "ABRT: command aborted"},
      {0x02, "NM: no media"},
      {0x01, "AMNF: address mark not found"}};
  std::string bits;
  for (const auto& [bit, name] : kStatusBits) {
    if (status & bit) bits += (bits.empty() ? "" : " ") + std::string(name);
  }
  std::string text = fmt::format("ATA status 0x{:02x} ({})", status, bits.empty() ? "-" : bits);
  if (status & kStatusError) {
    std::string causes;
    for (const auto& [bit, name] : kErrorBits) {
      if (error & bit) causes += (causes.empty() ? "" : ", ") + std::string(name);
    }
    text += fmt::format(", error 0x{:02x} ({})", error, causes.empty() ? "-" : causes);
  }
  return text;
}

uint32_t SectorsPerFrame(uint32_t mtu) {
  const size_t overhead = kAtaHeaderSize - kEthernetHeaderSize;
  if (mtu <= overhead) return 0;
  return std::min<uint32_t>(255, static_cast<uint32_t>((mtu - overhead) / kSectorSize));
}

common::StatusOr<IdentifyData> ParseIdentify(std::span<const uint8_t> data) {
  if (data.size() < 512) {
    return absl::DataLossError(
        common::StrCat("IDENTIFY DEVICE returned ", data.size(), " bytes, not 512"));
  }
  IdentifyData id;
  id.serial = AtaString(data, 10, 10);
  id.firmware = AtaString(data, 23, 4);
  id.model = AtaString(data, 27, 20);
  // Word 83 bit 10: the 48-bit address feature set is supported (bit 14 set, bit 15 clear
  // mark the word valid).
  const uint16_t w83 = Word(data, 83);
  id.lba48 = (w83 & 0xc000) == 0x4000 && (w83 & (1 << 10)) != 0;
  if (id.lba48) {
    for (int w = 3; w >= 0; --w) id.sectors = id.sectors << 16 | Word(data, 100 + w);
  } else {
    id.sectors = uint64_t{Word(data, 61)} << 16 | Word(data, 60);
  }
  if (id.sectors == 0) return absl::DataLossError("IDENTIFY DEVICE reports 0 sectors");
  return id;
}

std::string DescribeAddress(uint16_t shelf, uint8_t slot) {
  return common::StrCat("shelf ", shelf, " slot ", slot, " (e", shelf, ".", slot, ")");
}

}  // namespace stormark::agent::aoe
