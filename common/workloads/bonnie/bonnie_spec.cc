#include "common/spec_check.h"
#include "common/workloads/bonnie/bonnie_spec.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

Status CheckBonnieSpec(const stormark::v1::BonnieSpec& spec) {
  const uint32_t chunk = spec.chunk_size() == 0 ? 8192 : spec.chunk_size();
  if (chunk > kMaxBlockSize) {
    return absl::InvalidArgumentError(StrCat("bonnie: chunk ", FormatSizeShort(chunk),
                                             " is over the limit of ",
                                             FormatSizeShort(kMaxBlockSize)));
  }
  if (spec.direct() && chunk % 4096 != 0) {
    return absl::InvalidArgumentError(StrCat(
        "bonnie: with direct, chunk must be a multiple of 4k (got ", FormatSizeShort(chunk), ")"));
  }
  if (!spec.skip_io() && spec.size_bytes() != 0 && spec.size_bytes() < chunk) {
    return absl::InvalidArgumentError(StrCat("bonnie: size ", FormatSizeShort(spec.size_bytes()),
                                             " is smaller than one chunk (", FormatSizeShort(chunk),
                                             ")"));
  }
  if (!spec.skip_io() && spec.size_bytes() % chunk != 0) {
    return absl::InvalidArgumentError(StrCat("bonnie: size ", FormatSizeShort(spec.size_bytes()),
                                             " is not a multiple of chunk ",
                                             FormatSizeShort(chunk)));
  }
  if (spec.seekers() > kMaxBonnieSeekers) {
    return absl::InvalidArgumentError(
        StrCat("bonnie: seekers ", spec.seekers(), " is over the limit of ", kMaxBonnieSeekers));
  }
  if (spec.file_dirs() > kMaxBonnieFileDirs) {
    return absl::InvalidArgumentError(StrCat("bonnie: files directories ", spec.file_dirs(),
                                             " is over bonnie++'s limit of ", kMaxBonnieFileDirs));
  }
  if (spec.file_min_bytes() > spec.file_max_bytes()) {
    return absl::InvalidArgumentError(StrCat("bonnie: files min size ", spec.file_min_bytes(),
                                             " is above max size ", spec.file_max_bytes()));
  }
  if (spec.files_k() > 1024) {
    return absl::InvalidArgumentError(
        StrCat("bonnie: files ", spec.files_k(), " (x1024) is over the limit of 1024"));
  }
  if (spec.skip_io() && spec.files_k() == 0) {
    return absl::InvalidArgumentError("bonnie: nothing to run (no I/O tests and no file tests)");
  }
  return absl::OkStatus();
}

MemoryEstimate EstimateMemory(const stormark::v1::BonnieSpec& spec) {
  MemoryEstimate e{"bonnie", {}};
  // The file tests write in pieces of bonnie++'s default chunk.
  constexpr uint32_t kFileChunk = kBonnieDefaultChunk;
  if (!spec.skip_io()) {
    const uint64_t chunk = spec.chunk_size() == 0 ? kBonnieDefaultChunk : spec.chunk_size();
    const uint64_t seekers = spec.seekers() == 0 ? kBonnieDefaultSeekers : spec.seekers();
    e.parts.push_back(
        {"chunk buffers", SaturatingMul(seekers + 1, RoundUpBytes(chunk, kIoBufferAlignment)),
         StrCat("(1 + seekers ", seekers, ") x chunk ", FormatBytes(chunk)), "chunk or seekers"});
    // Each seeker records into a recorder of the phase and a histogram of its
    // own.
    e.parts.push_back(
        {"seeker histograms", SaturatingMul(SaturatingMul(seekers, 2), HistogramBytes()),
         StrCat("seekers ", seekers, " x 2 latency histograms of ", FormatBytes(HistogramBytes())),
         "seekers"});
  }
  const uint64_t files = uint64_t{spec.files_k()} * 1024;
  if (files > 0) {
    const uint64_t per_file = kBonnieBytesPerName + kDirBytesPerName;
    e.parts.push_back({"file names", SaturatingMul(files, per_file),
                       StrCat("files ", spec.files_k(), " x 1024 x ", per_file, " bytes per name"),
                       "files"});
    e.parts.push_back({"the file chunk", RoundUpBytes(kFileChunk, kIoBufferAlignment),
                       FormatBytes(kFileChunk), "files"});
  }
  // The test being timed and the phase's recorder.
  e.parts.push_back(
      {"recorders", SaturatingMul(2, HistogramBytes()), "2 latency histograms", "seekers"});
  return e;
}

}  // namespace stormark::common
