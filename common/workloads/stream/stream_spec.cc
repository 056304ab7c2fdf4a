#include "common/spec_check.h"
#include "common/workloads/stream/stream_spec.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

using stormark::v1::StreamSpec;

Status CheckStreamSpec(const StreamSpec& spec) {
  constexpr uint32_t kDirectAlignment = 4096;
  if (spec.direction() != StreamSpec::WRITE && spec.direction() != StreamSpec::READ) {
    return absl::InvalidArgumentError("stream: rw must be 'write' or 'read'");
  }
  if (spec.block_size() == 0) return absl::InvalidArgumentError("stream: bs must be at least 1");
  if (spec.block_size() > kMaxBlockSize) {
    return absl::InvalidArgumentError(StrCat("stream: bs ", FormatSizeShort(spec.block_size()),
                                             " is over the limit of ",
                                             FormatSizeShort(kMaxBlockSize)));
  }
  if (spec.size_bytes() == 0) return absl::InvalidArgumentError("stream: size must be at least 1");
  if (spec.size_bytes() % spec.block_size() != 0) {
    return absl::InvalidArgumentError(StrCat("stream: size ", FormatSizeShort(spec.size_bytes()),
                                             " is not a multiple of bs ",
                                             FormatSizeShort(spec.block_size())));
  }
  if (spec.direct() && spec.block_size() % kDirectAlignment != 0) {
    return absl::InvalidArgumentError(
        StrCat("stream: with direct, bs must be a multiple of 4k (got ",
               FormatSizeShort(spec.block_size()), ")"));
  }
  if (spec.fdatasync() && spec.direction() == StreamSpec::READ) {
    return absl::InvalidArgumentError("stream: fdatasync applies to rw=write only");
  }
  return absl::OkStatus();
}

MemoryEstimate EstimateMemory(const stormark::v1::StreamSpec& spec) {
  MemoryEstimate e{"stream", {}};
  e.parts.push_back(
      {"its block buffer", IoBufferBytes(spec.block_size()),
       StrCat("bs ", FormatBytes(spec.block_size()), BufferEachNote(spec.block_size())), "bs"});
  // A block target's lay-out (FillRandom) writes through a chunk of its own.
  e.parts.push_back({"the lay-out chunk", IoBufferBytes(kLayoutChunkBytes),
                     FormatBytes(kLayoutChunkBytes), "bs"});
  e.parts.push_back({"its recorder", HistogramBytes(), "one latency histogram", "bs"});
  return e;
}

}  // namespace stormark::common
