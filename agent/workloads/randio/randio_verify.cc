// randio's verify around the timed region: the data laid out before it (every unit stamped
// with its offset and generation 1), and everything read back and checked after it. The
// checks of each unit are VerifyBook's (block_verify.h).
#include <algorithm>

#include "agent/devices/io_buffer.h"
#include "agent/workloads/randio/randio.h"
#include "common/memory_estimate.h"
#include "common/random.h"

namespace stormark::agent {

using common::Status;

Status RandioWorkload::LayOutVerifiable(const std::atomic<bool>& cancelled) {
  constexpr uint32_t kChunk = common::kLayoutChunkBytes;
  ASSIGN_OR_RETURN(IoBuffer buf, IoBuffer::Allocate(kChunk));
  common::Xoshiro256 random(seed_ ^ 0x1a7047);
  const uint32_t generation = book_->NextGeneration();
  const uint64_t end = book_->base() + book_->size();
  const Member& m = members_[0];  // verify runs on one job
  for (uint32_t j = 0; j < m.jobs_count; ++j) {
    const uint64_t begin = m.offset + uint64_t{j} * m.offset_increment;
    for (uint64_t at = begin; at < std::min(end, begin + m.region_size);) {
      if (cancelled.load(std::memory_order_relaxed)) {
        return absl::CancelledError("randio: aborted while laying out verifiable data");
      }
      const uint32_t n =
          static_cast<uint32_t>(std::min<uint64_t>(kChunk, begin + m.region_size - at));
      random.Fill(buf.data(), n);
      book_->Stamp(buf.data(), at, n, generation, UINT32_MAX);
      RETURN_IF_ERROR(device_->WriteAt(at, n, buf.data()));
      book_->Written(at, n, generation);
      at += n;
    }
  }
  return device_->Flush(/*data_only=*/true);
}

Status RandioWorkload::ReadBack(const std::atomic<bool>& cancelled) {
  constexpr uint32_t kChunk = common::kLayoutChunkBytes;
  ASSIGN_OR_RETURN(IoBuffer buf, IoBuffer::Allocate(kChunk));
  const uint64_t end = book_->base() + book_->size();
  for (uint64_t at = book_->base(); at < end;) {
    if (cancelled.load(std::memory_order_relaxed)) {
      return absl::CancelledError("randio: aborted while reading back for verification");
    }
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(kChunk, end - at));
    RETURN_IF_ERROR(device_->ReadAt(at, n, buf.data()));
    book_->Check(buf.data(), at, n, "read-back");
    at += n;
  }
  return absl::OkStatus();
}

}  // namespace stormark::agent
