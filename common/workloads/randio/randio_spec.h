// The randio workload's rules, shared by the controller (which checks a plan before anything runs)
// and the agent (which trusts nothing it receives): its limits, its checks and its memory.
#ifndef STORMARK_COMMON_WORKLOADS_RANDIO_RANDIO_SPEC_H_
#define STORMARK_COMMON_WORKLOADS_RANDIO_RANDIO_SPEC_H_

#include <cstdint>

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
