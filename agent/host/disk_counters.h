// The kernel's own counters of a disk (/sys/class/block/NAME/stat), which say what really
// reached the device, whatever a workload believes it read: the oracle behind a phase's
// "reads came from the page cache" note.
#ifndef STORMARK_AGENT_HOST_DISK_COUNTERS_H_
#define STORMARK_AGENT_HOST_DISK_COUNTERS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// Completed requests and bytes, in each direction (the stat file counts 512-byte sectors
// whatever the device's block size).
struct DiskCounters {
  uint64_t reads = 0;
  uint64_t read_bytes = 0;
  uint64_t writes = 0;
  uint64_t written_bytes = 0;
};

// The counters of disk `name` ("vda", "loop3") under `sys_class_block`; nullopt when there is
// no such disk, the name is not a plain name, or the file cannot be read.
std::optional<DiskCounters> ReadDiskCounters(const std::string& sys_class_block,
                                             const std::string& name);

// The bytes a phase's workload says it read from its target: a stream read's bytes, randio's
// reads, bonnie's block and per-character reads; 0 for what it does not say (or does not read).
uint64_t WorkloadReadBytes(const stormark::v1::PhaseSpec& spec,
                           const stormark::v1::PhaseResult& result);

// What `disk` did between `before` and `after`, put in the result's device_stats ("disk",
// "disk.read_bytes", ...), and, when the workload read at least 64 MiB of which under a tenth
// reached the disk, a "possibly cache-dominated" warning naming both figures.
void AddDiskFigures(const std::string& disk, const DiskCounters& before, const DiskCounters& after,
                    const stormark::v1::PhaseSpec& spec, stormark::v1::PhaseResult* result);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_HOST_DISK_COUNTERS_H_
