#include "common/workloads/trim/trim_spec.h"

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

Status CheckTrimSpec(const stormark::v1::TrimSpec& spec) {
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(StrCat("trim: ", parts...)); };
  const uint64_t bs = spec.bs() == 0 ? kTrimDefaultBs : spec.bs();
  if (bs % kTrimAlignment != 0) return bad("bs ", FormatSizeShort(bs), " is not a multiple of 4k");
  if (bs > kMaxTrimBs) {
    return bad("bs ", FormatSizeShort(bs), " is over the limit of ", FormatSizeShort(kMaxTrimBs));
  }
  if (spec.offset_bytes() % kTrimAlignment != 0) {
    return bad("offset ", FormatSizeShort(spec.offset_bytes()), " is not a multiple of 4k");
  }
  if (spec.size_bytes() % kTrimAlignment != 0) {
    return bad("size ", FormatSizeShort(spec.size_bytes()), " is not a multiple of 4k");
  }
  return absl::OkStatus();
}

MemoryEstimate EstimateMemory(const stormark::v1::TrimSpec& spec, uint64_t region_bytes) {
  MemoryEstimate e{"trim", {}};
  const uint64_t bs = spec.bs() == 0 ? kTrimDefaultBs : spec.bs();
  if (spec.random()) {
    constexpr uint64_t kUnknownDevice = uint64_t{16} << 40;
    const uint64_t region = spec.size_bytes() != 0
                                ? spec.size_bytes()
                                : (region_bytes != 0 ? region_bytes : kUnknownDevice);
    const uint64_t requests = region / bs + 1;
    e.parts.push_back({"the random order", SaturatingMul(requests, 8),
                       StrCat(requests, " requests of bs ", FormatBytes(bs), " x 8 bytes"),
                       "size or bs"});
  }
  if (spec.then_write()) {
    e.parts.push_back({"the write buffer", IoBufferBytes(bs), FormatBytes(bs), "bs"});
  }
  e.parts.push_back({"its recorders", SaturatingMul(spec.then_write() ? 2 : 1, HistogramBytes()),
                     spec.then_write() ? "two latency histograms" : "one latency histogram",
                     "nothing"});
  return e;
}

}  // namespace stormark::common
