// The wire format of ATA over Ethernet, protocol version 1 (Coraid's AoEr11): the AoE header,
// the ATA command argument and the Query Config argument, plus the ATA registers and the
// IDENTIFY DEVICE data an initiator needs. Pure functions on byte buffers; no I/O.
//
//   0      6      12     14        15     16      18     19       20     24
//   | dst  | src  | type | ver|flg | error| major | minor| command| tag  | argument ...
//
// ATA argument (at 24): aflags, err/feature, sector count, cmd/status, lba0..lba5, 2 reserved,
// then the data. Query Config argument (at 24): buffer count, firmware version, sector count,
// version|ccmd, config string length, config string. Multi-byte fields are big-endian, except
// the LBA, which is sent low byte first as the ATA registers hold it.
#ifndef STORMARK_AGENT_DEVICES_AOE_AOE_FRAME_H_
#define STORMARK_AGENT_DEVICES_AOE_AOE_FRAME_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "common/status.h"

namespace stormark::agent::aoe {

using Mac = std::array<uint8_t, 6>;
inline constexpr Mac kBroadcastMac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

inline constexpr uint16_t kEtherType = 0x88A2;
inline constexpr uint8_t kVersion = 1;
inline constexpr uint32_t kSectorSize = 512;
// Header sizes from the start of the Ethernet frame.
inline constexpr size_t kEthernetHeaderSize = 14;
inline constexpr size_t kAoeHeaderSize = 24;
inline constexpr size_t kAtaHeaderSize = kAoeHeaderSize + 12;
inline constexpr size_t kConfigHeaderSize = kAoeHeaderSize + 8;
// Where the first byte of the tag sits: initiators filter replies on it.
inline constexpr size_t kTagOffset = 20;
// Shelf 0xffff and slot 0xff address every target.
inline constexpr uint16_t kAnyShelf = 0xffff;
inline constexpr uint8_t kAnySlot = 0xff;

enum Flags : uint8_t { kFlagResponse = 0x08, kFlagError = 0x04 };
enum Command : uint8_t { kCommandAta = 0, kCommandQueryConfig = 1 };
// AFlags of the ATA argument.
enum AtaFlags : uint8_t {
  kAtaExtended = 0x40,  // LBA48
  kAtaDevice = 0x10,
  kAtaAsync = 0x02,
  kAtaWrite = 0x01,
};
// The ATA commands this initiator issues.
enum AtaCommand : uint8_t {
  kAtaIdentify = 0xEC,
  kAtaReadExt = 0x24,
  kAtaWriteExt = 0x34,
  kAtaFlushCache = 0xE7,
};
// ATA status register bits.
inline constexpr uint8_t kStatusBusy = 0x80;
inline constexpr uint8_t kStatusDeviceFault = 0x20;
inline constexpr uint8_t kStatusError = 0x01;

struct Header {
  Mac dst{};
  Mac src{};
  uint8_t flags = 0;
  uint8_t error = 0;
  uint16_t shelf = 0;  // "major" in the spec
  uint8_t slot = 0;    // "minor"
  uint8_t command = 0;
  uint32_t tag = 0;
};

struct AtaArg {
  uint8_t aflags = 0;
  uint8_t err_feature = 0;
  uint8_t sector_count = 0;
  uint8_t cmd_status = 0;
  uint64_t lba = 0;  // 48 bits
};

struct ConfigArg {
  uint16_t buffer_count = 0;
  uint16_t firmware = 0;
  uint8_t sector_count = 0;  // the most sectors the target takes in one ATA command
  uint8_t version = 0;       // the target's AoE version
  uint8_t ccmd = 0;          // 0: read the config string
  std::string config;
};

// Writes the 24-byte AoE header (with version 1) at `out`.
void EncodeHeader(const Header& header, std::span<uint8_t, kAoeHeaderSize> out);
// Writes a whole ATA command header (36 bytes): the AoE header and the ATA argument.
void EncodeAta(const Header& header, const AtaArg& ata, std::span<uint8_t, kAtaHeaderSize> out);
// Writes a Query Config request (read, no config string): 32 bytes.
void EncodeQueryConfig(const Header& header, std::span<uint8_t, kConfigHeaderSize> out);

// Reads the AoE header of `frame`. False when the frame is too short or is not AoE version 1.
bool ParseHeader(std::span<const uint8_t> frame, Header* header);
// Reads the ATA argument; false when the frame is shorter than kAtaHeaderSize.
bool ParseAta(std::span<const uint8_t> frame, AtaArg* ata);
// Reads the Query Config argument; false when the frame is short or its string is cut off.
bool ParseConfig(std::span<const uint8_t> frame, ConfigArg* config);

// "bad argument parameter (AoE error 2)".
std::string AoeErrorText(uint8_t code);
// "ATA status 0x51 (DRDY ERR), error 0x10 (IDNF: sector not found)".
std::string AtaErrorText(uint8_t status, uint8_t error);
// Whether an ATA status register reports a failed command.
inline bool AtaFailed(uint8_t status) {
  return (status & (kStatusBusy | kStatusDeviceFault | kStatusError)) != 0;
}

// The data sectors that fit in one frame of an interface of `mtu` bytes (the MTU excludes the
// Ethernet header): 2 at 1500, 17 at 9000; at most 255 (the sector count is one byte).
uint32_t SectorsPerFrame(uint32_t mtu);

// What IDENTIFY DEVICE tells about a disk.
struct IdentifyData {
  uint64_t sectors = 0;  // LBA48 count when the disk supports LBA48, else the LBA28 count
  bool lba48 = false;
  std::string model, serial, firmware;
};
// Parses the 512 bytes of IDENTIFY DEVICE data (little-endian words, byte-swapped strings).
common::StatusOr<IdentifyData> ParseIdentify(std::span<const uint8_t> data);

// "shelf 1 slot 0" and "e1.0" (the kernel driver's name for it).
std::string DescribeAddress(uint16_t shelf, uint8_t slot);

}  // namespace stormark::agent::aoe

#endif  // STORMARK_AGENT_DEVICES_AOE_AOE_FRAME_H_
