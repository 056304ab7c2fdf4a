#include "agent/host/disk_counters.h"

#include <fstream>
#include <sstream>
#include <vector>

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::agent {

namespace {

// A disk's name as /sys/class/block lists it: the kernel writes a '/' of the device's name as
// '!' ("etherd!e1.0" for /dev/etherd/e1.0, "cciss!c0d0"), so that is allowed too.
bool IsDiskName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  return name.find_first_not_of(
             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
             "0123456789._-!") == std::string::npos;
}

}  // namespace

std::optional<DiskCounters> ReadDiskCounters(const std::string& sys_class_block,
                                             const std::string& name) {
  if (!IsDiskName(name)) return std::nullopt;
  std::ifstream in(sys_class_block + "/" + name + "/stat");
  std::vector<uint64_t> fields;
  uint64_t value = 0;
  while (fields.size() < 7 && in >> value) fields.push_back(value);
  // Documentation/block/stat.rst: reads, read merges, read sectors, read ticks, writes,
  // write merges, write sectors, ...
  if (fields.size() < 7) return std::nullopt;
  return DiskCounters{fields[0], fields[2] * 512, fields[4], fields[6] * 512};
}

uint64_t WorkloadReadBytes(const stormark::v1::PhaseSpec& spec,
                           const stormark::v1::PhaseResult& result) {
  if (spec.has_stream()) {
    return spec.stream().direction() == stormark::v1::StreamSpec::READ ? result.bytes() : 0;
  }
  uint64_t bytes = 0;
  for (const auto& m : result.measurements()) {
    const bool reads = (spec.has_randio() && m.name() == "read") ||
                       (spec.has_bonnie() && (m.name() == "get_block" || m.name() == "getc"));
    if (reads && !m.skipped()) bytes += m.bytes();
  }
  return bytes;
}

void AddDiskFigures(const std::string& disk, const DiskCounters& before, const DiskCounters& after,
                    const stormark::v1::PhaseSpec& spec, stormark::v1::PhaseResult* result) {
  auto delta = [](uint64_t a, uint64_t b) { return b >= a ? b - a : 0; };
  const uint64_t read = delta(before.read_bytes, after.read_bytes);
  auto& stats = *result->mutable_device_stats();
  stats["disk"] = disk;
  stats["disk.reads"] = common::StrCat(delta(before.reads, after.reads));
  stats["disk.read_bytes"] = common::StrCat(read);
  stats["disk.writes"] = common::StrCat(delta(before.writes, after.writes));
  stats["disk.written_bytes"] = common::StrCat(delta(before.written_bytes, after.written_bytes));
  constexpr uint64_t kEnough = uint64_t{64} << 20;
  const uint64_t workload = WorkloadReadBytes(spec, *result);
  if (workload >= kEnough && read < workload / 10) {
    result->add_warnings(common::StrCat(
        "possibly cache-dominated: the workload read ", common::FormatBytes(workload), ", but ",
        common::FormatBytes(read), " reached ", disk,
        " (the disk's own counters): the reads came from the page cache"));
  }
}

}  // namespace stormark::agent
