#include "common/memory_estimate.h"

#include <algorithm>

#include "common/histogram.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {
uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

uint64_t RoundUpBytes(uint64_t n, uint64_t to) {
  return n == 0 ? to : SaturatingAdd(n, to - 1) / to * to;
}

std::string Counted(uint64_t n, std::string_view one, std::string_view many) {
  return StrCat(n, " ", n == 1 ? one : many);
}

std::string BufferEachNote(uint64_t size) {
  const uint64_t each = IoBufferBytes(size);
  return each == size ? "" : StrCat(", ", FormatBytes(each), " each");
}

uint64_t IoBufferBytes(uint64_t size) {
  return size >= kIoBufferHugeFrom ? RoundUpBytes(size, kIoBufferHugePage)
                                   : RoundUpBytes(size, kIoBufferAlignment);
}

uint64_t HistogramBytes() { return uint64_t{LatencyHistogram::kBucketCount} * sizeof(uint64_t); }

uint64_t MemoryEstimate::total() const {
  uint64_t sum = 0;
  for (const MemoryPart& part : parts) sum = SaturatingAdd(sum, part.bytes);
  return sum;
}

const MemoryPart* MemoryEstimate::dominant() const {
  const MemoryPart* largest = nullptr;
  for (const MemoryPart& part : parts) {
    if (largest == nullptr || part.bytes > largest->bytes) largest = &part;
  }
  return largest;
}

std::string MemoryEstimate::Describe() const {
  const MemoryPart* main = dominant();
  if (main == nullptr) return StrCat(workload, " needs no memory of note");
  return StrCat(workload, " needs ", FormatBytes(total()), " of memory (", main->name, ": ",
                main->breakdown, ")");
}

std::string DescribeOverBudget(const MemoryEstimate& estimate, uint64_t limit,
                               std::string_view limit_note) {
  const MemoryPart* main = estimate.dominant();
  return StrCat(estimate.Describe(), ", over this agent's limits.max_memory of ",
                FormatBytes(limit), limit_note.empty() ? "" : StrCat(" (", limit_note, ")"),
                "; lower ", main == nullptr ? "the phase's sizes" : main->knobs,
                ", or raise limits.max_memory");
}

}  // namespace stormark::common
