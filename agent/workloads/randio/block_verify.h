// Verifiable block contents, and the book of what was last written where (randio's verify).
//
// The device region is cut into units (4 KiB, or 512 bytes for smaller blocks). Every unit
// written starts with a 32-byte header, little-endian:
//   0  magic "SMV1"          8  the unit's own device offset   20 generation (per write)
//   4  CRC32C of bytes 8..   16 run salt (random per phase)   24 job   28 unit size
// and the rest of the unit is random. The book keeps, for every unit, the generation of the
// last write to it that completed. A unit read back is then one of:
//   ok            header and checksum intact, offset and generation as expected
//   misdirected   intact, but its offset field names another place: a write landed here
//                 that was meant for elsewhere
//   stale         intact and in place, but an older generation (or an earlier run's salt): a
//                 write that reported success never reached the device (lost write)
//   torn          part of a write arrived: the checksum fails under a header that belongs
//                 here, or one unit of a write is current while another unit of the same
//                 write (in the same read) is stale
//   corrupt       no header, or a checksum that fails with a foreign header
//
// Thread safety: Stamp and Check may run concurrently. Written must not race with a Check or
// another Written of the same units (randio serialises overlapping requests when verifying).
#ifndef STORMARK_AGENT_WORKLOADS_RANDIO_BLOCK_VERIFY_H_
#define STORMARK_AGENT_WORKLOADS_RANDIO_BLOCK_VERIFY_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

class VerifyBook {
 public:
  static constexpr uint32_t kHeaderBytes = 32;
  static constexpr int kMaxReported = 16;
  // The most units a book tracks (4 bytes of memory each): 256 GiB of 4 KiB units.
  static constexpr uint64_t kMaxUnits = uint64_t{64} << 20;

  // Tracks [base, base + size) of a device, in units of `unit` bytes (a multiple of 512 that
  // divides base and size). `salt` tells this run's writes from earlier ones.
  VerifyBook(uint64_t base, uint64_t size, uint32_t unit, uint32_t salt);

  uint32_t unit() const { return unit_; }
  uint64_t base() const { return base_; }
  uint64_t size() const { return static_cast<uint64_t>(expected_.size()) * unit_; }

  // A fresh generation number for a write. Thread-safe.
  uint32_t NextGeneration() { return next_generation_.fetch_add(1, std::memory_order_relaxed); }

  // Writes the headers of every unit of `buf` (n bytes bound for `offset`, both multiples of
  // unit()) for generation `generation`, keeping the random rest of each unit.
  void Stamp(char* buf, uint64_t offset, uint32_t n, uint32_t generation, uint32_t job) const;
  // The write of generation `generation` to [offset, offset + n) completed.
  void Written(uint64_t offset, uint32_t n, uint32_t generation);
  // Checks `n` bytes read from `offset`. Units never written in this run are skipped. Returns
  // the number of mismatches found; `during` ("read", "read-back") goes into each report.
  uint64_t Check(const char* buf, uint64_t offset, uint32_t n, const char* during);

  // Units checked, mismatches, and the first kMaxReported of them.
  stormark::v1::VerifyReport Report() const;

 private:
  const uint64_t base_;
  const uint32_t unit_;
  const uint32_t salt_;
  std::vector<uint32_t> expected_;  // Per unit: last completed generation; 0 = untracked.
  std::atomic<uint32_t> next_generation_{1};
  std::atomic<uint64_t> checked_{0};
  mutable absl::Mutex mu_;
  stormark::v1::VerifyReport report_ ABSL_GUARDED_BY(mu_);  // Report() sets units_checked.
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_RANDIO_BLOCK_VERIFY_H_
