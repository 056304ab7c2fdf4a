// The randio workload's rules, shared by the controller (which checks a plan before anything runs)
// and the agent (which trusts nothing it receives): its limits, its checks and its memory.
#ifndef STORMARK_COMMON_WORKLOADS_RANDIO_RANDIO_SPEC_H_
#define STORMARK_COMMON_WORKLOADS_RANDIO_RANDIO_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/memory_estimate.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// Limits of a randio spec.
inline constexpr uint32_t kMaxRandioIodepth = 4096;
inline constexpr uint32_t kMaxRandioJobs = 256;

// True when a randio spec writes to its target (its pattern writes, or verify lays out data),
// or any job of its run group does.
bool RandioWrites(const stormark::v1::RandioSpec& spec);
// The same for one job, its group aside.
bool RandioJobWrites(const stormark::v1::RandioSpec& spec);

// The unit verify checks a job in: 4 KiB when its smallest block, its alignment, its offsets
// and its region are all whole 4 KiB, 512 bytes otherwise. The verifying jobs of a run group
// share the smallest of their units.
uint32_t VerifyUnitOf(uint32_t bs_min, uint32_t blockalign, uint64_t offset,
                      uint64_t offset_increment, uint64_t region);

// One job of a run group as verify sees it: its threads' regions (thread j's is [offset + j x
// offset_increment, + size)) and what it does there.
struct RandioJobRegions {
  std::string name;
  bool verify = false;
  bool writes = false;  // Its pattern writes in the timed region (verify's layout aside).
  uint64_t offset = 0, offset_increment = 0, size = 0;
  uint32_t threads = 1;
  // False when the regions depend on the device (size 0, a percentage): not known yet.
  bool known = true;
};

// A job that verifies and another job that writes in the timed region reach the same bytes:
// the verify would check data the other job overwrote (or flag the other's writes as
// corruption), so such a group is refused. [begin, end) is where the first two regions meet.
struct VerifyConflict {
  size_t verifier = 0, writer = 0;  // Indices into the jobs.
  uint64_t begin = 0, end = 0;
};

// The jobs of `spec` (its own first, then its group's), their regions as far as the spec
// alone says.
std::vector<RandioJobRegions> RegionsOf(const stormark::v1::RandioSpec& spec);

// The first conflict between the jobs of a run group, or nullopt; jobs not `known` are
// skipped. Two verifying jobs that only read may share bytes (both check the same layout), as
// may a verifying job and one that only reads.
std::optional<VerifyConflict> FindVerifyConflict(const std::vector<RandioJobRegions>& jobs);

// "job 'check' verifies 0-1 MiB, which job 'scribble' writes at the same time: ..."
std::string DescribeVerifyConflict(const std::vector<RandioJobRegions>& jobs,
                                   const VerifyConflict& conflict);

// The first problem with a randio spec, as one line naming the parameter (with fio's name),
// or OK. Checks what can be known without the target; the agent checks the rest (alignment,
// the device's size) when it prepares the phase.
Status CheckRandioSpec(const stormark::v1::RandioSpec& spec);

// What the estimates assume of the workloads' code, exposed for their tests.
inline constexpr uint64_t kRandioBytesPerRequest = 256;  // A queue slot, its ring entries.
inline constexpr uint64_t kRandioHistogramsPerJob = 3;   // read, write, flush
inline constexpr uint64_t kRandioSeriesBytesPerInterval = 24;
inline constexpr uint64_t kMaxSeriesIntervals = 100'000;  // Recorder::kMaxIntervals

inline constexpr uint64_t kVerifyBytesPerUnit = 4;
inline constexpr uint64_t kVerifyMaxUnits = uint64_t{64} << 20;

// randio's file in a dir target when the spec gives no size (agent/workloads/randio.h).
inline constexpr uint64_t kRandioDefaultDirFileBytes = uint64_t{1} << 30;

// randio: numjobs x iodepth buffers of bs_max, each job's queue state and
// recorders, and with verify the book of what was written (4 bytes per unit of
// the verified span). `region_bytes` is the size of each job's region when the
// spec gives none (size 0): the dir target's default file or the device's size;
// 0 when not known yet, and then the verify book is counted at its largest
// (VerifyBook::kMaxUnits units).
// A run group counts each of its jobs. `series_interval_ms` is PhaseSpec.series_interval_ms.
MemoryEstimate EstimateMemory(const stormark::v1::RandioSpec& spec, uint64_t region_bytes,
                              uint32_t series_interval_ms = 1000);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_WORKLOADS_RANDIO_RANDIO_SPEC_H_
