// How much memory a phase will hold at most, stated from its spec before
// anything is allocated, so that a request that would exhaust the host is
// refused with one line instead of killing the agent (DESIGN.md: "Every phase
// states its memory before it allocates, within a budget").
//
// Each workload has its own estimate, an EstimateMemory overload in its own
// module (common/workloads/<name>/<name>_spec.h): the buffers, tables and per-thread
// state that grow with its parameters. What stays small whatever the spec (a
// few KiB of stdio buffers, the agent's own baseline) is left out. The figures
// are upper bounds of what the workload's code allocates today; a workload that
// changes what it allocates changes its estimate with it.
//
// Shared by the agent (its policy refuses a phase over limits.max_memory) and
// the controller (which can refuse a plan before anything runs, from the budget
// each agent reports).
#ifndef STORMARK_COMMON_MEMORY_ESTIMATE_H_
#define STORMARK_COMMON_MEMORY_ESTIMATE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// The bytes an aligned I/O buffer of `size` bytes takes
// (agent/devices/io_buffer.h): from kIoBufferHugeFrom on, whole 2 MiB huge
// pages; below, whole 4 KiB pages.
inline constexpr uint64_t kIoBufferAlignment = 4096;
inline constexpr uint64_t kIoBufferHugeFrom = 256 * 1024;
inline constexpr uint64_t kIoBufferHugePage = 2 * 1024 * 1024;
uint64_t IoBufferBytes(uint64_t size);

// Arithmetic on byte counts that a hostile spec cannot wrap to a small number: UINT64_MAX
// instead of an overflow.
uint64_t SaturatingMul(uint64_t a, uint64_t b);
uint64_t SaturatingAdd(uint64_t a, uint64_t b);
// `n` rounded up to a multiple of `to`; `to` for 0 (an allocation takes at least one unit).
uint64_t RoundUpBytes(uint64_t n, uint64_t to);
// "1 job", "256 jobs".
std::string Counted(uint64_t n, std::string_view one, std::string_view many);
// ", 2 MiB each" when an aligned buffer of `size` takes more than it holds; "" otherwise.
std::string BufferEachNote(uint64_t size);

// One latency histogram (common/histogram.h) at its largest: a count per bucket, every bucket
// held (a histogram holds its buckets up to the highest value recorded).
uint64_t HistogramBytes();

// One part of a phase's memory: what it is, its bytes, the parameters that make
// it that large ("iodepth 4096 x bs 1 MiB x 1 job") and the ones that shrink it
// ("iodepth, bs or numjobs").
struct MemoryPart {
  std::string name;
  uint64_t bytes = 0;
  std::string breakdown;
  std::string knobs;
};

struct MemoryEstimate {
  std::string workload;  // "randio"
  std::vector<MemoryPart> parts;

  // The sum of the parts (saturating: a hostile spec cannot wrap it to a small
  // number).
  uint64_t total() const;
  // The largest part, or nullptr when there are none.
  const MemoryPart* dominant() const;
  // "randio needs 4 GiB of memory (buffers: iodepth 4096 x bs 1 MiB x 1 job)".
  std::string Describe() const;
};

// One line for a phase over an agent's budget: Describe(), then "over this
// agent's limits.max_memory of 5.86 GiB (a quarter of its RAM); lower iodepth,
// bs or numjobs, or raise limits.max_memory". `limit_note` ("a quarter of its
// RAM") is left out when empty.
std::string DescribeOverBudget(const MemoryEstimate& estimate, uint64_t limit,
                               std::string_view limit_note);

// The phase directory keeps the name of every file it created, for its cleanup
// (agent/targets/dir_target.h): an unordered_set node (a 64-byte block), the
// name's own heap block when it is over 15 characters (48 bytes for bonnie's),
// and its bucket.
inline constexpr uint64_t kDirBytesPerName = 128;
// Fixed buffers a phase may hold beside the ones its parameters size: the 1 MiB
// lay-out and read-back chunk of stream and randio.
inline constexpr uint64_t kLayoutChunkBytes = 1 << 20;

}  // namespace stormark::common

#endif  // STORMARK_COMMON_MEMORY_ESTIMATE_H_
