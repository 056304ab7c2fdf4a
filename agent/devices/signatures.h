// Recognises what a block device already holds, by reading the sectors where filesystems,
// partition tables, RAID and volume managers put their magic numbers (as blkid does, for the
// formats a storage host is likely to have). A device that holds any of them is never written.
//
// The checks are strict enough that random data (what stormark writes) practically never
// matches: two-byte magics (ext, MBR) are confirmed by other fields of the same structure.
#ifndef STORMARK_AGENT_DEVICES_SIGNATURES_H_
#define STORMARK_AGENT_DEVICES_SIGNATURES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace stormark::agent {

// Reads `n` bytes at `offset` of the device being examined into `buf`; false when it cannot
// (beyond the end, or an I/O error).
using ReadFn = std::function<bool(uint64_t offset, size_t n, char* buf)>;

// The signatures found on a device of `size` bytes, by name ("ext4 filesystem", "GPT partition
// table", "Linux RAID (md) superblock 1.2", "LVM2 physical volume", ...). Empty when none.
std::vector<std::string> FindSignatures(const ReadFn& read, uint64_t size);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_SIGNATURES_H_
