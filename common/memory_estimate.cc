#include "common/memory_estimate.h"

#include <algorithm>

#include "common/histogram.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {
namespace {

uint64_t Mul(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

uint64_t Add(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

uint64_t RoundUp(uint64_t n, uint64_t to) { return n == 0 ? to : Add(n, to - 1) / to * to; }

// "1 job", "256 jobs".
std::string Count(uint64_t n, std::string_view one, std::string_view many) {
  return StrCat(n, " ", n == 1 ? one : many);
}

// ", 2 MiB each" when an aligned buffer takes more than it holds.
std::string EachNote(uint64_t size) {
  const uint64_t each = IoBufferBytes(size);
  return each == size ? "" : StrCat(", ", FormatBytes(each), " each");
}

}  // namespace

uint64_t IoBufferBytes(uint64_t size) {
  return size >= kIoBufferHugeFrom ? RoundUp(size, kIoBufferHugePage)
                                   : RoundUp(size, kIoBufferAlignment);
}

uint64_t HistogramBytes() { return uint64_t{LatencyHistogram::kBucketCount} * sizeof(uint64_t); }

uint64_t MemoryEstimate::total() const {
  uint64_t sum = 0;
  for (const MemoryPart& part : parts) sum = Add(sum, part.bytes);
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

MemoryEstimate EstimateMemory(const stormark::v1::StreamSpec& spec) {
  MemoryEstimate e{"stream", {}};
  e.parts.push_back({"its block buffer", IoBufferBytes(spec.block_size()),
                     StrCat("bs ", FormatBytes(spec.block_size()), EachNote(spec.block_size())),
                     "bs"});
  // A block target's lay-out (FillRandom) writes through a chunk of its own.
  e.parts.push_back({"the lay-out chunk", IoBufferBytes(kLayoutChunkBytes),
                     FormatBytes(kLayoutChunkBytes), "bs"});
  e.parts.push_back({"its recorder", HistogramBytes(), "one latency histogram", "bs"});
  return e;
}

MemoryEstimate EstimateMemory(const stormark::v1::RandioSpec& spec, uint64_t region_bytes) {
  MemoryEstimate e{"randio", {}};
  const uint64_t jobs = std::max<uint32_t>(1, spec.numjobs());
  const uint64_t depth = std::max<uint32_t>(1, spec.iodepth());
  const uint64_t bs = spec.bs_max() == 0 ? spec.bs_min() : std::max(spec.bs_min(), spec.bs_max());
  // Each job keeps iodepth buffers of the largest block, whatever the engine
  // makes of the depth: the bound cannot depend on the device.
  e.parts.push_back({"buffers", Mul(Mul(jobs, depth), IoBufferBytes(bs)),
                     StrCat("iodepth ", depth, " x bs ", FormatBytes(bs), " x ",
                            Count(jobs, "job", "jobs"), EachNote(bs)),
                     "iodepth, bs or numjobs"});
  e.parts.push_back({"queue state", Mul(Mul(jobs, depth), kRandioBytesPerRequest),
                     StrCat("iodepth ", depth, " x ", Count(jobs, "job", "jobs"), " x ",
                            kRandioBytesPerRequest, " bytes per request"),
                     "iodepth or numjobs"});
  uint64_t recorders = Mul(jobs, Mul(kRandioHistogramsPerJob, HistogramBytes()));
  std::string recorder_text = StrCat(Count(jobs, "job", "jobs"), " x ", kRandioHistogramsPerJob,
                                     " latency histograms of ", FormatBytes(HistogramBytes()));
  if (spec.runtime_nanos() > 0) {
    // A per-second series per recorder, for as long as the phase runs.
    const uint64_t seconds =
        Add(static_cast<uint64_t>(spec.runtime_nanos()),
            static_cast<uint64_t>(std::max<int64_t>(0, spec.ramp_time_nanos()))) /
            1'000'000'000 +
        1;
    recorders = Add(recorders, Mul(Mul(jobs, kRandioHistogramsPerJob),
                                   Mul(seconds, kRandioSeriesBytesPerSecond)));
    recorder_text += StrCat(" and ", seconds, " s of per-second series");
  }
  e.parts.push_back({"recorders", recorders, recorder_text, "numjobs (or runtime)"});
  e.parts.push_back({"the lay-out and read-back chunk", IoBufferBytes(kLayoutChunkBytes),
                     FormatBytes(kLayoutChunkBytes), "bs"});
  if (spec.verify()) {
    const uint64_t region = spec.size_bytes() != 0 ? spec.size_bytes() : region_bytes;
    if (region == 0) {
      e.parts.push_back({"the verify book", Mul(kVerifyMaxUnits, kVerifyBytesPerUnit),
                         StrCat("up to ", kVerifyMaxUnits, " units x ", kVerifyBytesPerUnit,
                                " bytes, the device's size not known yet"),
                         "size (the verified region)"});
    } else {
      const bool whole_pages = spec.bs_min() % 4096 == 0 && spec.offset_bytes() % 4096 == 0 &&
                               spec.offset_increment_bytes() % 4096 == 0 && region % 4096 == 0;
      const uint64_t unit = whole_pages ? 4096 : 512;
      const uint64_t span = Add(Mul(jobs - 1, spec.offset_increment_bytes()), region);
      const uint64_t units = std::min(kVerifyMaxUnits, span / unit + 1);
      e.parts.push_back({"the verify book", Mul(units, kVerifyBytesPerUnit),
                         StrCat(kVerifyBytesPerUnit, " bytes per ", FormatBytes(unit), " unit of ",
                                FormatBytes(span)),
                         "size (the verified region)"});
    }
  }
  return e;
}

MemoryEstimate EstimateMemory(const stormark::v1::BonnieSpec& spec) {
  MemoryEstimate e{"bonnie", {}};
  // The file tests write in pieces of bonnie++'s default chunk.
  constexpr uint32_t kFileChunk = kBonnieDefaultChunk;
  if (!spec.skip_io()) {
    const uint64_t chunk = spec.chunk_size() == 0 ? kBonnieDefaultChunk : spec.chunk_size();
    const uint64_t seekers = spec.seekers() == 0 ? kBonnieDefaultSeekers : spec.seekers();
    e.parts.push_back({"chunk buffers", Mul(seekers + 1, RoundUp(chunk, kIoBufferAlignment)),
                       StrCat("(1 + seekers ", seekers, ") x chunk ", FormatBytes(chunk)),
                       "chunk or seekers"});
    // Each seeker records into a recorder of the phase and a histogram of its
    // own.
    e.parts.push_back(
        {"seeker histograms", Mul(Mul(seekers, 2), HistogramBytes()),
         StrCat("seekers ", seekers, " x 2 latency histograms of ", FormatBytes(HistogramBytes())),
         "seekers"});
  }
  const uint64_t files = uint64_t{spec.files_k()} * 1024;
  if (files > 0) {
    const uint64_t per_file = kBonnieBytesPerName + kDirBytesPerName;
    e.parts.push_back({"file names", Mul(files, per_file),
                       StrCat("files ", spec.files_k(), " x 1024 x ", per_file, " bytes per name"),
                       "files"});
    e.parts.push_back({"the file chunk", RoundUp(kFileChunk, kIoBufferAlignment),
                       FormatBytes(kFileChunk), "files"});
  }
  // The test being timed and the phase's recorder.
  e.parts.push_back({"recorders", Mul(2, HistogramBytes()), "2 latency histograms", "seekers"});
  return e;
}

MemoryEstimate EstimateMemory(const stormark::v1::PostmarkSpec& spec) {
  MemoryEstimate e{"postmark", {}};
  const stormark::v1::PostmarkSpec p = WithPostmarkDefaults(spec);
  e.parts.push_back(
      {"the file table", Mul(Mul(2, p.number()), kPostmarkBytesPerSlot),
       StrCat("2 x number ", p.number(), " x ", kPostmarkBytesPerSlot, " bytes per slot"),
       "number"});
  const uint64_t live = uint64_t{p.number()} + std::min(p.number(), p.transactions());
  e.parts.push_back(
      {"file names", Mul(live, kDirBytesPerName),
       StrCat("up to ", live, " files at once (number ", p.number(),
              " + transactions, at most 2 x number) x ", kDirBytesPerName, " bytes per name"),
       "number"});
  e.parts.push_back({"the text files are written from", p.max_size_bytes(),
                     StrCat("size high bound ", FormatBytes(p.max_size_bytes())), "size"});
  e.parts.push_back({"the read buffer", p.read_block_size(),
                     StrCat("read block size ", FormatBytes(p.read_block_size())),
                     "read block size"});
  // One histogram per kind of operation and part of the run.
  e.parts.push_back({"recorders", Mul(8, HistogramBytes()), "8 latency histograms", "number"});
  return e;
}

MemoryEstimate EstimateMemory(const stormark::v1::CommandSpec& spec) {
  MemoryEstimate e{"command", {}};
  uint64_t line = spec.shell().size();
  for (const std::string& arg : spec.argv()) line = Add(line, arg.size() + 1);
  // argv is copied once for execve; stdout and stderr keep a 4 KiB tail each.
  e.parts.push_back(
      {"its command line", Mul(2, line), StrCat(line, " bytes, copied once"), "the command line"});
  e.parts.push_back({"output tails", 2 * 4096, "4 KiB of stdout and of stderr", "nothing"});
  e.parts.push_back({"its recorder", HistogramBytes(), "one latency histogram", "nothing"});
  return e;
}

MemoryEstimate EstimatePhaseMemory(const stormark::v1::PhaseSpec& spec,
                                   uint64_t randio_region_bytes) {
  switch (spec.workload_case()) {
    case stormark::v1::PhaseSpec::kStream:
      return EstimateMemory(spec.stream());
    case stormark::v1::PhaseSpec::kRandio:
      return EstimateMemory(spec.randio(), randio_region_bytes);
    case stormark::v1::PhaseSpec::kBonnie:
      return EstimateMemory(spec.bonnie());
    case stormark::v1::PhaseSpec::kPostmark:
      return EstimateMemory(spec.postmark());
    case stormark::v1::PhaseSpec::kCommand:
      return EstimateMemory(spec.command());
    case stormark::v1::PhaseSpec::WORKLOAD_NOT_SET:
      break;
  }
  return MemoryEstimate{std::string(WorkloadName(spec)), {}};
}

}  // namespace stormark::common
