#include "common/spec_check.h"
#include "common/workloads/randio/randio_spec.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

bool RandioJobWrites(const stormark::v1::RandioSpec& spec) {
  using stormark::v1::RandioSpec;
  return spec.verify() || spec.rw() == RandioSpec::WRITE || spec.rw() == RandioSpec::RANDWRITE ||
         ((spec.rw() == RandioSpec::RANDRW || spec.rw() == RandioSpec::READWRITE) &&
          spec.rwmixread() < 100);
}

bool RandioWrites(const stormark::v1::RandioSpec& spec) {
  return RandioJobWrites(spec) ||
         std::any_of(spec.group().begin(), spec.group().end(),
                     [](const stormark::v1::RandioSpec& job) { return RandioJobWrites(job); });
}

uint32_t VerifyUnitOf(uint32_t bs_min, uint32_t blockalign, uint64_t offset,
                      uint64_t offset_increment, uint64_t region) {
  return bs_min % 4096 == 0 && blockalign % 4096 == 0 && offset % 4096 == 0 &&
                 offset_increment % 4096 == 0 && region % 4096 == 0
             ? 4096
             : 512;
}

std::vector<RandioJobRegions> RegionsOf(const stormark::v1::RandioSpec& spec) {
  using stormark::v1::RandioSpec;
  std::vector<RandioJobRegions> jobs;
  for (int i = -1; i < spec.group_size(); ++i) {
    const RandioSpec& job = i < 0 ? spec : spec.group(i);
    RandioJobRegions r;
    r.name = job.name();
    r.verify = job.verify();
    r.writes = job.rw() == RandioSpec::WRITE || job.rw() == RandioSpec::RANDWRITE ||
               ((job.rw() == RandioSpec::RANDRW || job.rw() == RandioSpec::READWRITE) &&
                job.rwmixread() < 100);
    r.offset = job.offset_bytes();
    r.offset_increment = job.offset_increment_bytes();
    r.size = job.size_bytes();
    r.threads = std::max<uint32_t>(1, job.numjobs());
    r.known = job.size_bytes() != 0 && job.size_percent() == 0 && job.offset_percent() == 0 &&
              job.offset_increment_percent() == 0;
    jobs.push_back(std::move(r));
  }
  return jobs;
}

std::optional<VerifyConflict> FindVerifyConflict(const std::vector<RandioJobRegions>& jobs) {
  for (size_t v = 0; v < jobs.size(); ++v) {
    if (!jobs[v].verify || !jobs[v].known) continue;
    for (size_t w = 0; w < jobs.size(); ++w) {
      // A job's own threads are checked with the job (CheckRandioJob: a region per thread).
      if (w == v || !jobs[w].writes || !jobs[w].known) continue;
      for (uint32_t i = 0; i < jobs[v].threads; ++i) {
        const uint64_t vb = jobs[v].offset + uint64_t{i} * jobs[v].offset_increment;
        for (uint32_t k = 0; k < jobs[w].threads; ++k) {
          const uint64_t wb = jobs[w].offset + uint64_t{k} * jobs[w].offset_increment;
          const uint64_t begin = std::max(vb, wb);
          const uint64_t end = std::min(vb + jobs[v].size, wb + jobs[w].size);
          if (begin < end) return VerifyConflict{v, w, begin, end};
        }
      }
    }
  }
  return std::nullopt;
}

std::string DescribeVerifyConflict(const std::vector<RandioJobRegions>& jobs,
                                   const VerifyConflict& c) {
  return StrCat("job '", jobs[c.verifier].name, "' verifies bytes ", FormatSizeShort(c.begin), "-",
                FormatSizeShort(c.end), ", which job '", jobs[c.writer].name,
                "' writes at the same time: its verify would check data another job "
                "overwrote; give the jobs regions apart (offset, size, offset_increment)");
}

namespace {

// bssplit and write_bssplit: sizes in range, shares adding up to 100, and bs_min / bs_max the
// smallest and largest of them, so that every rule on bs holds for every size.
Status CheckBlockSizeSplits(const stormark::v1::RandioSpec& spec, uint32_t bs_min,
                            uint32_t bs_max) {
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(StrCat("randio: ", parts...)); };
  if (spec.bssplit_size() == 0 && spec.write_bssplit_size() > 0) {
    return bad("write_bssplit needs bssplit (the reads' sizes)");
  }
  if (spec.bssplit_size() == 0) return absl::OkStatus();
  uint32_t smallest = UINT32_MAX, largest = 0;
  for (const auto* split : {&spec.bssplit(), &spec.write_bssplit()}) {
    if (split->size() > 64) return bad("bssplit has ", split->size(), " sizes; at most 64");
    if (split->empty()) continue;
    uint32_t total = 0;
    for (const auto& share : *split) {
      if (share.bs() == 0 || share.bs() > kMaxBlockSize) {
        return bad("bssplit size ", FormatSizeShort(share.bs()), " is not from 1 to ",
                   FormatSizeShort(kMaxBlockSize));
      }
      if (share.percent() > 100) return bad("bssplit share ", share.percent(), "% is over 100%");
      total += share.percent();
      smallest = std::min(smallest, share.bs());
      largest = std::max(largest, share.bs());
    }
    if (total != 100) return bad("bssplit shares add up to ", total, "%, not 100%");
  }
  if (bs_min != smallest || bs_max != largest) {
    return bad("with bssplit, bs must be its smallest size and bs_max its largest (",
               FormatSizeShort(smallest), " and ", FormatSizeShort(largest), ")");
  }
  for (const auto* split : {&spec.bssplit(), &spec.write_bssplit()}) {
    for (const auto& share : *split) {
      if (share.bs() % smallest != 0) {
        return bad("bssplit size ", FormatSizeShort(share.bs()),
                   " is not a multiple of the smallest, ", FormatSizeShort(smallest));
      }
    }
  }
  return absl::OkStatus();
}

// One job's spec, its group aside.
Status CheckRandioJob(const stormark::v1::RandioSpec& spec) {
  using stormark::v1::RandioSpec;
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(StrCat("randio: ", parts...)); };
  if (spec.rw() == RandioSpec::PATTERN_UNSPECIFIED || !RandioSpec::Pattern_IsValid(spec.rw())) {
    return bad("rw must be read, write, randread, randwrite, randrw or readwrite");
  }
  const bool mixed = spec.rw() == RandioSpec::RANDRW || spec.rw() == RandioSpec::READWRITE;
  if (spec.has_rwmixread() && spec.rwmixread() > 100) {
    return bad("rwmixread ", spec.rwmixread(), " is over 100");
  }
  if (spec.has_rwmixread() && !mixed) return bad("rwmixread applies to rw=randrw or readwrite");
  const uint32_t bs_min = spec.bs_min();
  const uint32_t bs_max = spec.bs_max() == 0 ? bs_min : spec.bs_max();
  if (bs_min == 0) return bad("bs must be at least 1");
  if (bs_max > kMaxBlockSize) {
    return bad("bs ", FormatSizeShort(bs_max), " is over the limit of ",
               FormatSizeShort(kMaxBlockSize));
  }
  if (bs_max < bs_min) {
    return bad("bs range ", FormatSizeShort(bs_min), "-", FormatSizeShort(bs_max),
               " ends below its start");
  }
  if (bs_max % bs_min != 0) {
    return bad("bs range ", FormatSizeShort(bs_min), "-", FormatSizeShort(bs_max),
               ": the largest size must be a multiple of the smallest");
  }
  if (spec.iodepth() > kMaxRandioIodepth) {
    return bad("iodepth ", spec.iodepth(), " is over the limit of ", kMaxRandioIodepth);
  }
  if (spec.numjobs() > kMaxRandioJobs) {
    return bad("numjobs ", spec.numjobs(), " is over the limit of ", kMaxRandioJobs);
  }
  if (spec.size_bytes() != 0 && spec.size_bytes() % bs_min != 0) {
    return bad("size ", FormatSizeShort(spec.size_bytes()), " is not a multiple of bs ",
               FormatSizeShort(bs_min));
  }
  if (spec.size_bytes() != 0 && spec.size_bytes() < bs_max) {
    return bad("size ", FormatSizeShort(spec.size_bytes()), " is smaller than one block (",
               FormatSizeShort(bs_max), ")");
  }
  if (spec.direct() && (bs_min % 512 != 0 || spec.offset_bytes() % 512 != 0 ||
                        spec.offset_increment_bytes() % 512 != 0)) {
    return bad(
        "with direct, bs, offset and offset_increment must be multiples of 512 (the "
        "device may ask for 4k)");
  }
  if (spec.runtime_nanos() < 0 || spec.ramp_time_nanos() < 0) {
    return bad("runtime and ramp_time must not be negative");
  }
  if (spec.time_based() && spec.runtime_nanos() == 0) return bad("time_based needs a runtime");
  if (spec.engine() != RandioSpec::ENGINE_UNSPECIFIED && spec.engine() != RandioSpec::PSYNC &&
      spec.engine() != RandioSpec::IO_URING && spec.engine() != RandioSpec::LIBAIO) {
    return bad("engine must be psync, io_uring or libaio");
  }
  for (const auto& [name, value] :
       {std::pair{"iodepth_batch_submit", spec.iodepth_batch_submit()},
        std::pair{"iodepth_batch_complete_min", spec.iodepth_batch_complete_min()},
        std::pair{"iodepth_batch_complete_max", spec.iodepth_batch_complete_max()},
        std::pair{"iodepth_low", spec.iodepth_low()}}) {
    if (value > kMaxRandioIodepth) {
      return bad(name, " ", value, " is over the limit of ", kMaxRandioIodepth);
    }
  }
  if (spec.iodepth_batch_complete_max() != 0 &&
      spec.iodepth_batch_complete_min() > spec.iodepth_batch_complete_max()) {
    return bad("iodepth_batch_complete_min ", spec.iodepth_batch_complete_min(),
               " is over iodepth_batch_complete_max ", spec.iodepth_batch_complete_max());
  }
  RETURN_IF_ERROR(CheckBlockSizeSplits(spec, bs_min, bs_max));
  if (spec.blockalign() > kMaxBlockSize) {
    return bad("blockalign ", FormatSizeShort(spec.blockalign()), " is over the limit of ",
               FormatSizeShort(kMaxBlockSize));
  }
  if (spec.direct() && spec.blockalign() % 512 != 0) {
    return bad("with direct, blockalign must be a multiple of 512");
  }
  if (spec.startdelay_nanos() < 0) return bad("startdelay must not be negative");
  if (spec.thinktime_nanos() < 0 || spec.thinktime_spin_nanos() < 0) {
    return bad("thinktime and thinktime_spin must not be negative");
  }
  if (spec.thinktime_spin_nanos() > spec.thinktime_nanos()) {
    return bad("thinktime_spin is longer than thinktime (the spin is part of the think time)");
  }
  if (spec.thinktime_blocks() != 0 && spec.thinktime_nanos() == 0) {
    return bad("thinktime_blocks applies with a thinktime");
  }
  if (spec.rate_poisson() && spec.rate_iops() == 0 && spec.rate_bytes() == 0) {
    return bad("rate_process poisson needs a rate (rate_iops or rate)");
  }
  for (const auto& [name, value] :
       {std::pair{"size", spec.size_percent()}, std::pair{"offset", spec.offset_percent()},
        std::pair{"offset_increment", spec.offset_increment_percent()}}) {
    if (value > 100) return bad(name, " ", value, "% is over 100%");
  }
  if (spec.size_percent() != 0 && spec.size_bytes() != 0) {
    return bad("give size in bytes or as a percentage, not both");
  }
  if ((spec.offset_percent() != 0 && spec.offset_bytes() != 0) ||
      (spec.offset_increment_percent() != 0 && spec.offset_increment_bytes() != 0)) {
    return bad("give offset and offset_increment in bytes or as a percentage, not both");
  }
  if (spec.fsync() != 0 && spec.fdatasync() != 0) return bad("give fsync or fdatasync, not both");
  if ((spec.fsync() != 0 || spec.fdatasync() != 0) && !RandioJobWrites(spec)) {
    return bad("fsync and fdatasync apply to patterns that write");
  }
  if (spec.random_distribution() == RandioSpec::ZIPF) {
    if (!(spec.zipf_theta() > 0) || spec.zipf_theta() == 1 || spec.zipf_theta() > 100) {
      return bad("zipf theta must be above 0, not 1, and at most 100 (as zipf:1.2)");
    }
    if (spec.rw() != RandioSpec::RANDREAD && spec.rw() != RandioSpec::RANDWRITE &&
        spec.rw() != RandioSpec::RANDRW) {
      return bad("random_distribution applies to random patterns (randread, randwrite, randrw)");
    }
  } else if (spec.random_distribution() != RandioSpec::DISTRIBUTION_UNSPECIFIED &&
             spec.random_distribution() != RandioSpec::UNIFORM) {
    return bad("random_distribution must be random or zipf:THETA");
  }
  if (spec.verify()) {
    if (bs_min % 512 != 0 || spec.offset_bytes() % 512 != 0 ||
        spec.offset_increment_bytes() % 512 != 0 || spec.blockalign() % 512 != 0) {
      return bad("verify needs bs, offset, offset_increment and blockalign in multiples of 512");
    }
    const uint32_t jobs = spec.numjobs() == 0 ? 1 : spec.numjobs();
    if (jobs > 1 && RandioJobWrites(spec) && spec.rw() != RandioSpec::RANDREAD &&
        spec.rw() != RandioSpec::READ &&
        (spec.size_bytes() == 0 || spec.offset_increment_bytes() < spec.size_bytes())) {
      return bad("verify with writes and numjobs ", jobs,
                 " needs a region per job: set size, and offset_increment to at least size");
    }
  }
  return absl::OkStatus();
}

// The lead of a job: what runs before its timed region.
int64_t LeadOf(const stormark::v1::RandioSpec& spec) {
  return spec.startdelay_nanos() + spec.ramp_time_nanos();
}

}  // namespace

Status CheckRandioSpec(const stormark::v1::RandioSpec& spec) {
  if (spec.group_size() == 0) return CheckRandioJob(spec);
  auto bad = [](auto... parts) { return absl::InvalidArgumentError(StrCat("randio: ", parts...)); };
  if (spec.group_size() >= static_cast<int>(kMaxRandioJobs)) {
    return bad("a run group of ", spec.group_size() + 1, " jobs; at most ", kMaxRandioJobs);
  }
  uint64_t threads = 0;
  for (int i = -1; i < spec.group_size(); ++i) {
    const stormark::v1::RandioSpec& job = i < 0 ? spec : spec.group(i);
    const bool printable = std::all_of(job.name().begin(), job.name().end(),
                                       [](char c) { return c >= 0x20 && c < 0x7f; });
    if (job.name().empty() || job.name().size() > 64 || !printable) {
      return bad("job ", i + 2, " of the run group needs a name of 1 to 64 printable characters");
    }
    const std::string name = StrCat("job '", job.name(), "': ");
    if (Status s = CheckRandioJob(job); !s.ok()) {
      std::string message(s.message());
      if (message.starts_with("randio: ")) message.erase(0, 8);
      return Status(s.code(), StrCat("randio: ", name, message));
    }
    if (i >= 0 && job.group_size() > 0) return bad(name, "a job of a run group has no group");
    if (job.engine() != spec.engine() || job.direct() != spec.direct()) {
      return bad(name,
                 "the jobs of a run group share one open device: engine and direct must be "
                 "the same as job '",
                 spec.name(), "''s");
    }
    if (job.seed() != spec.seed()) return bad(name, "the jobs of a run group share one seed");
    if (LeadOf(job) != LeadOf(spec)) {
      return bad(name, "startdelay + ramp_time differs from job '", spec.name(),
                 "''s: a run group is measured from one instant");
    }
    threads += std::max<uint32_t>(1, job.numjobs());
  }
  if (threads > kMaxRandioJobs) {
    return bad("the run group's jobs come to ", threads, " threads (numjobs); at most ",
               kMaxRandioJobs);
  }
  // Regions that depend on the device are checked by the agent, once it has opened it.
  const std::vector<RandioJobRegions> regions = RegionsOf(spec);
  if (auto conflict = FindVerifyConflict(regions)) {
    return bad(DescribeVerifyConflict(regions, *conflict));
  }
  return absl::OkStatus();
}

namespace {

// The verify unit of a job as its spec gives it, `region_bytes` standing for a size of 0.
uint32_t SpecVerifyUnit(const stormark::v1::RandioSpec& spec, uint64_t region_bytes) {
  return VerifyUnitOf(spec.bs_min(), spec.blockalign(), spec.offset_bytes(),
                      spec.offset_increment_bytes(),
                      spec.size_bytes() != 0 ? spec.size_bytes() : region_bytes);
}

// One job's estimate; with verify, its book in units of `verify_unit` bytes.
MemoryEstimate EstimateJob(const stormark::v1::RandioSpec& spec, uint64_t region_bytes,
                           uint32_t series_interval_ms, uint32_t verify_unit);

}  // namespace

MemoryEstimate EstimateMemory(const stormark::v1::RandioSpec& spec, uint64_t region_bytes,
                              uint32_t series_interval_ms) {
  if (spec.group_size() == 0) {
    return EstimateJob(spec, region_bytes, series_interval_ms, SpecVerifyUnit(spec, region_bytes));
  }
  // The verifying jobs of a group share the smallest unit of theirs.
  uint32_t unit = 4096;
  for (int i = -1; i < spec.group_size(); ++i) {
    const stormark::v1::RandioSpec& job = i < 0 ? spec : spec.group(i);
    if (job.verify()) unit = std::min(unit, SpecVerifyUnit(job, region_bytes));
  }
  MemoryEstimate e{"randio", {}};
  for (int i = -1; i < spec.group_size(); ++i) {
    stormark::v1::RandioSpec job = i < 0 ? spec : spec.group(i);
    job.clear_group();
    MemoryEstimate part = EstimateJob(job, region_bytes, series_interval_ms, unit);
    for (auto& p : part.parts) {
      p.name = StrCat("job '", job.name(), "': ", p.name);
      e.parts.push_back(std::move(p));
    }
  }
  return e;
}

namespace {

MemoryEstimate EstimateJob(const stormark::v1::RandioSpec& spec, uint64_t region_bytes,
                           uint32_t series_interval_ms, uint32_t verify_unit) {
  MemoryEstimate e{"randio", {}};
  const uint64_t jobs = std::max<uint32_t>(1, spec.numjobs());
  const uint64_t depth = std::max<uint32_t>(1, spec.iodepth());
  const uint64_t bs = spec.bs_max() == 0 ? spec.bs_min() : std::max(spec.bs_min(), spec.bs_max());
  // Each job keeps iodepth buffers of the largest block, whatever the engine
  // makes of the depth: the bound cannot depend on the device.
  e.parts.push_back({"buffers", SaturatingMul(SaturatingMul(jobs, depth), IoBufferBytes(bs)),
                     StrCat("iodepth ", depth, " x bs ", FormatBytes(bs), " x ",
                            Counted(jobs, "job", "jobs"), BufferEachNote(bs)),
                     "iodepth, bs or numjobs"});
  e.parts.push_back({"queue state",
                     SaturatingMul(SaturatingMul(jobs, depth), kRandioBytesPerRequest),
                     StrCat("iodepth ", depth, " x ", Counted(jobs, "job", "jobs"), " x ",
                            kRandioBytesPerRequest, " bytes per request"),
                     "iodepth or numjobs"});
  uint64_t recorders =
      SaturatingMul(jobs, SaturatingMul(kRandioHistogramsPerJob, HistogramBytes()));
  std::string recorder_text = StrCat(Counted(jobs, "job", "jobs"), " x ", kRandioHistogramsPerJob,
                                     " latency histograms of ", FormatBytes(HistogramBytes()));
  if (spec.runtime_nanos() > 0) {
    // A series per recorder, for as long as the phase runs.
    const uint64_t interval_ms = series_interval_ms == 0 ? 1000 : series_interval_ms;
    const uint64_t millis =
        SaturatingAdd(static_cast<uint64_t>(spec.runtime_nanos()),
                      static_cast<uint64_t>(std::max<int64_t>(0, spec.ramp_time_nanos()))) /
        1'000'000;
    const uint64_t intervals = std::min<uint64_t>(millis / interval_ms + 1, kMaxSeriesIntervals);
    recorders = SaturatingAdd(
        recorders, SaturatingMul(SaturatingMul(jobs, kRandioHistogramsPerJob),
                                 SaturatingMul(intervals, kRandioSeriesBytesPerInterval)));
    recorder_text += StrCat(" and ", intervals, " intervals of series");
  }
  e.parts.push_back({"recorders", recorders, recorder_text, "numjobs (or runtime)"});
  e.parts.push_back({"the lay-out and read-back chunk", IoBufferBytes(kLayoutChunkBytes),
                     FormatBytes(kLayoutChunkBytes), "bs"});
  if (spec.verify()) {
    const uint64_t region = spec.size_bytes() != 0 ? spec.size_bytes() : region_bytes;
    if (region == 0) {
      e.parts.push_back({"the verify book", SaturatingMul(kVerifyMaxUnits, kVerifyBytesPerUnit),
                         StrCat("up to ", kVerifyMaxUnits, " units x ", kVerifyBytesPerUnit,
                                " bytes, the device's size not known yet"),
                         "size (the verified region)"});
    } else {
      const uint64_t unit = verify_unit;
      const uint64_t span =
          SaturatingAdd(SaturatingMul(jobs - 1, spec.offset_increment_bytes()), region);
      const uint64_t units = std::min(kVerifyMaxUnits, span / unit + 1);
      e.parts.push_back({"the verify book", SaturatingMul(units, kVerifyBytesPerUnit),
                         StrCat(kVerifyBytesPerUnit, " bytes per ", FormatBytes(unit), " unit of ",
                                FormatBytes(span)),
                         "size (the verified region)"});
    }
  }
  return e;
}

}  // namespace

}  // namespace stormark::common
