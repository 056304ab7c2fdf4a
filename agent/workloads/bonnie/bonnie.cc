#include "agent/workloads/bonnie/bonnie.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <random>

#include "agent/workloads/bonnie/bonnie_files.h"
#include "agent/workloads/bonnie/bonnie_io.h"
#include "common/memory_estimate.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/bonnie/bonnie_spec.h"
#include "fmt/format.h"

namespace stormark::agent {

static_assert(kBonnieChunkSize == common::kBonnieDefaultChunk &&
                  kBonnieSeekers == common::kBonnieDefaultSeekers,
              "common/memory_estimate.h counts bonnie++'s defaults");

namespace {

using common::Status;
using common::StatusOr;
using stormark::v1::BonnieSpec;
using stormark::v1::Measurement;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kFileNamesSalt = 0xb0b0'0000'0000'0004ULL;
// Descriptors the agent needs besides the file tests' directories.
constexpr rlim_t kSpareDescriptors = 64;

constexpr const char* kIoTests[] = {"putc", "put_block", "rewrite", "getc", "get_block", "seeks"};
constexpr const char* kFileTests[] = {"seq_create", "seq_stat", "seq_del",
                                      "ran_create", "ran_stat", "ran_del"};

uint64_t PickSeed() {
  std::random_device device;
  const uint64_t seed = (uint64_t{device()} << 32 | device()) ^
                        static_cast<uint64_t>(common::SystemClock().NowUnixNanos());
  return seed == 0 ? 1 : seed;
}

}  // namespace

BonnieWorkload::BonnieWorkload(const BonnieSpec& spec, std::unique_ptr<Dir> target,
                               const HostFacts& host, std::string filesystem)
    : spec_(spec),
      target_(std::move(target)),
      host_ram_bytes_(host.ram_bytes),
      filesystem_(std::move(filesystem)) {}

BonnieWorkload::~BonnieWorkload() { Cleanup(); }

StatusOr<BonnieParams> BonnieWorkload::Resolve(const BonnieSpec& spec, uint64_t host_ram_bytes) {
  BonnieParams p;
  p.chunk_size = spec.chunk_size() == 0 ? kBonnieChunkSize : spec.chunk_size();
  p.ram_bytes = spec.ram_bytes() == 0 ? host_ram_bytes : spec.ram_bytes();
  p.direct = spec.direct();
  p.fsync_every_write = spec.fsync_every_write();
  p.run_io = !spec.skip_io();
  if (p.run_io) {
    uint64_t size = spec.size_bytes();
    if (size == 0) {
      if (p.ram_bytes == 0) {
        return absl::FailedPreconditionError(
            "bonnie: size 0 means 2 x RAM, but this host's RAM is unknown; set size or ram");
      }
      size = 2 * p.ram_bytes;
      // bonnie++ rounds the 2 x RAM size up to a whole GiB when it is over half a GiB above one.
      if (size % kGiB > kGiB / 2) size += kGiB - size % kGiB;
    }
    size -= size % p.chunk_size;
    if (size == 0) {
      return absl::InvalidArgumentError(common::StrCat("bonnie: size is smaller than one chunk (",
                                                       common::FormatSizeShort(p.chunk_size), ")"));
    }
    p.size_bytes = size;
    if (!spec.skip_char()) {
      const uint64_t chars = spec.char_size_bytes() == 0 ? kBonnieCharSize : spec.char_size_bytes();
      p.char_size_bytes = std::min(chars, size);
    }
    p.seeks = spec.seeks() == 0 ? kBonnieSeeks : spec.seeks();
    p.seekers = spec.seekers() == 0 ? kBonnieSeekers : spec.seekers();
  }
  p.files_k = spec.files_k();
  p.files = uint64_t{spec.files_k()} * kBonnieDirectoryUnit;
  p.file_min_bytes = spec.file_min_bytes();
  p.file_max_bytes = spec.file_max_bytes();
  p.file_dirs = std::max<uint32_t>(spec.file_dirs(), 1);
  p.seed = spec.seed();
  return p;
}

Status BonnieWorkload::Prepare(const std::atomic<bool>& cancelled,
                               std::vector<std::string>* warnings) {
  if (cancelled.load(std::memory_order_relaxed)) {
    return absl::CancelledError("bonnie: aborted while preparing");
  }
  RETURN_IF_ERROR(common::CheckBonnieSpec(spec_));
  ASSIGN_OR_RETURN(params_, Resolve(spec_, host_ram_bytes_));
  if (params_.seed == 0) params_.seed = PickSeed();
  const std::string& target_name = target_->target_name();

  // The data file is gone before the file tests start, as in bonnie++.
  const uint64_t files_bytes =
      params_.files == 0 || params_.file_max_bytes <= UINT64_MAX / params_.files
          ? params_.files * params_.file_max_bytes
          : UINT64_MAX;
  const uint64_t needed = std::max(params_.size_bytes, files_bytes);
  if (const std::optional<uint64_t> free_bytes = target_->FreeBytes()) {
    if (needed > *free_bytes) {
      return absl::ResourceExhaustedError(
          common::StrCat("target '", target_name, "' has ", common::FormatBytes(*free_bytes),
                         " free; the bonnie phase needs ", common::FormatBytes(needed)));
    }
  }
  if (params_.files > 0 && params_.fsync_every_write) {
    // fsync_every_write holds every test directory open, as bonnie++ does.
    struct rlimit limit {};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        params_.file_dirs + kSpareDescriptors > limit.rlim_cur) {
      return absl::FailedPreconditionError(
          common::StrCat("bonnie: ", params_.file_dirs,
                         " directories with fsync_every_write need as many "
                         "open files, over the agent's limit of ",
                         limit.rlim_cur, "; use fewer directories"));
    }
  }

  if (filesystem_ == "tmpfs" || filesystem_ == "ramfs") {
    warnings->push_back(common::StrCat("target '", target_name, "' is on ", filesystem_,
                                       ": this measures memory, not storage"));
  }
  // The page cache is as large as the host's memory, whatever `ram` told the 2 x rule: a
  // `ram` below it sizes the file to fit in the cache.
  const uint64_t cache_ram = std::max(params_.ram_bytes, host_ram_bytes_);
  if (params_.run_io && !params_.direct && cache_ram > 0 && params_.size_bytes < 2 * cache_ram) {
    const std::string ram =
        params_.ram_bytes < host_ram_bytes_
            ? common::StrCat("this host's RAM is ", common::FormatBytes(host_ram_bytes_),
                             "; ram was set to ", common::FormatBytes(params_.ram_bytes))
            : common::StrCat("RAM is ", common::FormatBytes(cache_ram));
    warnings->push_back(common::StrCat("possibly cache-dominated: size ",
                                       common::FormatBytes(params_.size_bytes),
                                       " is under 2x RAM (", ram, ") and direct is off"));
  }

  if (params_.run_io) {
    // Creating the data file now finds a filesystem without O_DIRECT before the run.
    ASSIGN_OR_RETURN(
        std::unique_ptr<File> file,
        target_->CreateFile(kBonnieDataFile, O_WRONLY | (params_.direct ? O_DIRECT : 0)));
    if (const int err = file->Close(); err != 0) return common::ErrnoError("bonnie: close", -err);
  }
  prepared_ = true;
  return absl::OkStatus();
}

Status BonnieWorkload::Add(StatusOr<Measurement> measurement) {
  if (!measurement.ok()) return measurement.status();
  measurements_.push_back(std::move(*measurement));
  return absl::OkStatus();
}

Status BonnieWorkload::RunIoTests(RunContext& ctx, common::Recorder* recorder) {
  if (!params_.run_io) {
    for (const char* name : kIoTests) measurements_.push_back(SkippedTest(name));
    return absl::OkStatus();
  }
  BonnieIoTests io(params_, target_.get(), ctx, recorder);
  const bool chars = params_.char_size_bytes > 0;
  RETURN_IF_ERROR(Add(chars ? io.Putc() : SkippedTest("putc")));
  RETURN_IF_ERROR(Add(io.PutBlock()));
  RETURN_IF_ERROR(Add(io.Rewrite()));
  RETURN_IF_ERROR(Add(chars ? io.Getc() : SkippedTest("getc")));
  RETURN_IF_ERROR(Add(io.GetBlock()));
  RETURN_IF_ERROR(Add(io.Seeks()));
  const int64_t start = ctx.clock.MonotonicNanos();
  RETURN_IF_ERROR(io.RemoveDataFile());
  data_file_delete_nanos_ = ctx.clock.MonotonicNanos() - start;
  return absl::OkStatus();
}

Status BonnieWorkload::RunFileTests(RunContext& ctx, common::Recorder* recorder) {
  if (params_.files == 0) {
    for (const char* name : kFileTests) measurements_.push_back(SkippedTest(name));
    return absl::OkStatus();
  }
  BonnieRandom random(params_.seed ^ kFileNamesSalt);
  BonnieFileTests files(params_, target_.get(), ctx, recorder, &random);
  RETURN_IF_ERROR(Add(files.Create(/*random_names=*/false)));
  RETURN_IF_ERROR(Add(files.StatSequential()));
  RETURN_IF_ERROR(Add(files.DeleteSequential()));
  RETURN_IF_ERROR(Add(files.Create(/*random_names=*/true)));
  RETURN_IF_ERROR(Add(files.StatRandom()));
  return Add(files.DeleteRandom());
}

Status BonnieWorkload::Run(RunContext& ctx) {
  if (!prepared_) return absl::FailedPreconditionError("bonnie: Run before a successful Prepare");
  measurements_.clear();
  common::Recorder* recorder = ctx.recorders.Add();
  RETURN_IF_ERROR(RunIoTests(ctx, recorder));
  return RunFileTests(ctx, recorder);
}

CleanupReport BonnieWorkload::Cleanup() { return target_ ? target_->Cleanup() : CleanupReport(); }

namespace {

// The note a seeks figure carries when the data file's deletion, which bonnie++ 2.00 may count
// in its own seeks figure, would have changed it by a twentieth or more; "" otherwise.
std::string SeeksNote(const Measurement& seeks, int64_t delete_nanos) {
  if (seeks.skipped() || seeks.too_fast() || seeks.elapsed_nanos() <= 0 || delete_nanos <= 0 ||
      delete_nanos * 20 < seeks.elapsed_nanos()) {
    return "";
  }
  const double ours =
      static_cast<double>(seeks.ops()) * 1e9 / static_cast<double>(seeks.elapsed_nanos());
  const double with_delete = static_cast<double>(seeks.ops()) * 1e9 /
                             static_cast<double>(seeks.elapsed_nanos() + delete_nanos);
  return fmt::format(
      "seeks: bonnie++ 2.00 counts the deletion of its data file in its seeks figure whenever "
      "its last seeker is still running when the first one finishes (it varies from run to "
      "run); this run's deletion took {:.2f} s, so bonnie++'s figure for the same run would "
      "read between {:.0f} and {:.0f} seeks/s. Ours ({:.0f}) leaves the deletion out",
      static_cast<double>(delete_nanos) / 1e9, with_delete, ours, ours);
}

}  // namespace

void BonnieWorkload::AddToResult(stormark::v1::PhaseResult* result) const {
  for (const Measurement& m : measurements_) *result->add_measurements() = m;
  if (!prepared_) return;
  for (const Measurement& m : measurements_) {
    if (m.name() != "seeks") continue;
    if (std::string note = SeeksNote(m, data_file_delete_nanos_); !note.empty()) {
      result->add_warnings(std::move(note));
    }
  }
  if (data_file_delete_nanos_ >= 0) {
    (*result->mutable_resolved())["data_file_delete_nanos"] =
        common::StrCat(data_file_delete_nanos_);
  }
  auto& resolved = *result->mutable_resolved();
  resolved["size_bytes"] = common::StrCat(params_.size_bytes);
  resolved["ram_bytes"] = common::StrCat(params_.ram_bytes);
  resolved["chunk_size"] = common::StrCat(params_.chunk_size);
  resolved["char_size_bytes"] = common::StrCat(params_.char_size_bytes);
  resolved["seeks"] = common::StrCat(params_.seeks);
  resolved["seekers"] = common::StrCat(params_.seekers);
  resolved["files_k"] = common::StrCat(params_.files_k);
  resolved["file_max_bytes"] = common::StrCat(params_.file_max_bytes);
  resolved["file_min_bytes"] = common::StrCat(params_.file_min_bytes);
  resolved["file_dirs"] = common::StrCat(params_.file_dirs);
  resolved["file_chunk_size"] = common::StrCat(params_.file_chunk_size);
  resolved["seed"] = common::StrCat(params_.seed);
}

}  // namespace stormark::agent
