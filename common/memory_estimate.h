// How much memory a phase will hold at most, stated from its spec before
// anything is allocated, so that a request that would exhaust the host is
// refused with one line instead of killing the agent (DESIGN.md: "Every phase
// states its memory before it allocates, within a budget").
//
// Each workload has its own estimate, a self-contained function next to its
// others (EstimateMemory overloads below): the buffers, tables and per-thread
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

// One latency histogram (common/histogram.h): a count per bucket.
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

// stream: its one block buffer.
MemoryEstimate EstimateMemory(const stormark::v1::StreamSpec& spec);

// randio: numjobs x iodepth buffers of bs_max, each job's queue state and
// recorders, and with verify the book of what was written (4 bytes per unit of
// the verified span). `region_bytes` is the size of each job's region when the
// spec gives none (size 0): the dir target's default file or the device's size;
// 0 when not known yet, and then the verify book is counted at its largest
// (VerifyBook::kMaxUnits units).
MemoryEstimate EstimateMemory(const stormark::v1::RandioSpec& spec, uint64_t region_bytes);

// bonnie: the I/O tests' chunk buffers (one, plus one per seeker) and the
// seekers' histograms, and the file tests' names (files x a name's bytes, in
// the test's list and in the phase directory's record).
MemoryEstimate EstimateMemory(const stormark::v1::BonnieSpec& spec);

// postmark: PostMark's file table (2 x number slots), the names of the files
// that may exist at once (the pool plus one per transaction, at most the
// table), the text files are written from (size high bound) and the read
// buffer.
MemoryEstimate EstimateMemory(const stormark::v1::PostmarkSpec& spec);

// command: the command line and the output tails kept (the child's own memory
// is the child's).
MemoryEstimate EstimateMemory(const stormark::v1::CommandSpec& spec);

// The estimate of the workload `spec` holds ({} with no parts when none is
// set). `randio_region_bytes` as for the randio estimate.
MemoryEstimate EstimatePhaseMemory(const stormark::v1::PhaseSpec& spec,
                                   uint64_t randio_region_bytes);

// What the estimates assume of the workloads' code, exposed for their tests.
inline constexpr uint64_t kRandioBytesPerRequest = 256;  // A queue slot, its ring entries.
inline constexpr uint64_t kRandioHistogramsPerJob = 3;   // read, write, flush
inline constexpr uint64_t kRandioSeriesBytesPerSecond = 16;
inline constexpr uint64_t kVerifyBytesPerUnit = 4;
inline constexpr uint64_t kVerifyMaxUnits = uint64_t{64} << 20;
// bonnie++'s defaults of chunk and seekers (agent/workloads/bonnie_common.h).
inline constexpr uint32_t kBonnieDefaultChunk = 8192;
inline constexpr uint32_t kBonnieDefaultSeekers = 5;
// randio's file in a dir target when the spec gives no size (agent/workloads/randio.h).
inline constexpr uint64_t kRandioDefaultDirFileBytes = uint64_t{1} << 30;
// A bonnie file name: a std::string (32 bytes) holding up to 28 characters on
// the heap (a 48-byte block), and its directory number.
inline constexpr uint64_t kBonnieBytesPerName = 96;
// The phase directory keeps the name of every file it created, for its cleanup
// (agent/targets/dir_target.h): an unordered_set node (a 64-byte block), the
// name's own heap block when it is over 15 characters (48 bytes for bonnie's),
// and its bucket.
inline constexpr uint64_t kDirBytesPerName = 128;
// A PostMark table slot: file number, size and directory.
inline constexpr uint64_t kPostmarkBytesPerSlot = 16;
// Fixed buffers a phase may hold beside the ones its parameters size: the 1 MiB
// lay-out and read-back chunk of stream and randio.
inline constexpr uint64_t kLayoutChunkBytes = 1 << 20;

}  // namespace stormark::common

#endif  // STORMARK_COMMON_MEMORY_ESTIMATE_H_
