#include "agent/devices/signatures.h"

#include <cstring>

namespace stormark::agent {
namespace {

constexpr uint64_t kKiB = 1024;

uint16_t Le16(const char* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint32_t Le32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Reads `n` bytes at `offset` and compares them with `magic`.
bool HasBytes(const ReadFn& read, uint64_t offset, std::string_view magic) {
  std::string buf(magic.size(), '\0');
  return read(offset, magic.size(), buf.data()) && buf == magic;
}

// ext2/3/4: the superblock at 1024 has magic 0xEF53 at 56, and sane block and revision fields.
std::string Ext(const ReadFn& read) {
  char sb[1024];
  if (!read(1024, sizeof(sb), sb)) return "";
  if (Le16(sb + 56) != 0xEF53) return "";
  const uint32_t log_block_size = Le32(sb + 24);  // block size = 1024 << this
  const uint32_t rev_level = Le32(sb + 76);
  const uint16_t state = Le16(sb + 58);
  if (log_block_size > 6 || rev_level > 1 || state == 0 || state > 7) return "";
  const uint32_t compat = Le32(sb + 92), incompat = Le32(sb + 96);
  if (incompat & 0x40 /* extents */ || incompat & 0x80 /* 64bit */) return "ext4 filesystem";
  if (compat & 0x4 /* has_journal */) return "ext3 filesystem";
  return "ext2 filesystem";
}

// MBR: 0x55AA at 510, and four partition entries whose boot flags are 0x00 or 0x80.
bool Mbr(const ReadFn& read) {
  char sector[512];
  if (!read(0, sizeof(sector), sector)) return false;
  if (static_cast<uint8_t>(sector[510]) != 0x55 || static_cast<uint8_t>(sector[511]) != 0xAA) {
    return false;
  }
  for (int i = 0; i < 4; ++i) {
    const uint8_t flag = static_cast<uint8_t>(sector[446 + 16 * i]);
    if (flag != 0x00 && flag != 0x80) return false;
  }
  return true;
}

struct Magic {
  const char* name;
  uint64_t offset;
  std::string_view bytes;
};

}  // namespace

std::vector<std::string> FindSignatures(const ReadFn& read, uint64_t size) {
  using namespace std::string_view_literals;
  std::vector<std::string> found;
  // Fixed magics, from util-linux's libblkid probes.
  static const Magic kMagics[] = {
      {"XFS filesystem", 0, "XFSB"sv},
      {"btrfs filesystem", 64 * kKiB + 64, "_BHRfS_M"sv},
      {"swap space", 4096 - 10, "SWAPSPACE2"sv},
      {"swap space", 4096 - 10, "SWAP-SPACE"sv},
      {"GPT partition table", 512 + 0, "EFI PART"sv},
      {"GPT partition table", 4096 + 0, "EFI PART"sv},
      {"LVM2 physical volume", 512 + 0, "LABELONE"sv},
      {"LVM2 physical volume", 0, "LABELONE"sv},
      {"LVM2 physical volume", 1024, "LABELONE"sv},
      {"LVM2 physical volume", 1536, "LABELONE"sv},
      {"LUKS encrypted volume", 0, "LUKS\xba\xbe"sv},
      {"LUKS2 encrypted volume", 0, "SKUL\xba\xbe"sv},
      {"Linux RAID (md) superblock 1.1", 0, "\xfc\x4e\x2b\xa9"sv},
      {"Linux RAID (md) superblock 1.2", 4096, "\xfc\x4e\x2b\xa9"sv},
      {"NTFS filesystem", 3, "NTFS    "sv},
      {"FAT filesystem", 54, "FAT1"sv},
      {"FAT32 filesystem", 82, "FAT32   "sv},
      {"ISO 9660 filesystem", 32769, "CD001"sv},
      {"ZFS pool member", 128 * kKiB, "\x0c\xb1\xba\x00\x00\x00\x00\x00"sv},
      {"bcache device", 4096 + 24,
       "\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81"sv},
      {"F2FS filesystem", 1024, "\x10\x20\xf5\xf2"sv},
  };
  auto add = [&found](std::string name) {
    for (const auto& f : found) {
      if (f == name) return;
    }
    found.push_back(std::move(name));
  };
  for (const Magic& m : kMagics) {
    if (m.offset + m.bytes.size() <= size && HasBytes(read, m.offset, m.bytes)) add(m.name);
  }
  if (std::string ext = Ext(read); !ext.empty()) add(ext);
  if (Mbr(read)) add("MBR partition table (or boot sector)");
  // md 0.90 and 1.0 keep their superblock at the end of the device.
  constexpr std::string_view kMdMagic = "\xfc\x4e\x2b\xa9"sv;
  if (size >= 128 * kKiB) {
    const uint64_t md090 = (size & ~(64 * kKiB - 1)) - 64 * kKiB;
    if (HasBytes(read, md090, kMdMagic)) add("Linux RAID (md) superblock 0.90");
    const uint64_t md10 = ((size - 8 * kKiB) & ~(4 * kKiB - 1));
    if (HasBytes(read, md10, kMdMagic)) add("Linux RAID (md) superblock 1.0");
  }
  return found;
}

}  // namespace stormark::agent
