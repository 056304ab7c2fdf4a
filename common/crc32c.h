// CRC-32C (Castagnoli), the checksum of iSCSI, ext4 metadata and btrfs. Debian 12 has no C++
// library for it, so it is here: the SSE4.2 crc32 instruction where the CPU has it, else a
// slicing-by-8 table. Thread-safe.
#ifndef STORMARK_COMMON_CRC32C_H_
#define STORMARK_COMMON_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace stormark::common {

// Extends `crc` (0 to start) with `n` bytes of `data`. Crc32c(0, "123456789", 9) is
// 0xE3069283.
uint32_t Crc32c(uint32_t crc, const void* data, size_t n);

// The software path alone, for tests that compare the two.
uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t n);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_CRC32C_H_
