#include "agent/devices/fill.h"

#include <cstring>

#include "agent/devices/io_buffer.h"
#include "common/random.h"
#include "common/strings.h"

namespace stormark::agent {

common::Status FillRandom(Device& device, uint64_t begin, uint64_t end, uint64_t seed,
                          const std::atomic<bool>& cancelled) {
  constexpr size_t kChunk = common::kLayoutChunkBytes;
  constexpr size_t kStampEvery = 4096;
  ASSIGN_OR_RETURN(IoBuffer buf, IoBuffer::Allocate(kChunk));
  common::Xoshiro256 random(seed);
  for (uint64_t at = begin; at < end;) {
    if (cancelled.load(std::memory_order_relaxed)) {
      return absl::CancelledError("aborted while laying out data");
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, end - at));
    random.Fill(buf.data(), n);
    for (size_t s = 0; s + sizeof(uint64_t) <= n; s += kStampEvery) {
      const uint64_t offset = at + s;
      std::memcpy(buf.data() + s, &offset, sizeof(offset));
    }
    RETURN_IF_ERROR(device.WriteAt(at, n, buf.data()));
    at += n;
  }
  return device.Flush(/*data_only=*/true);
}

}  // namespace stormark::agent
