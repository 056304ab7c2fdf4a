#include "agent/workloads/stream/stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "agent/devices/fill.h"
#include "agent/devices/page_cache.h"
#include "agent/host/system_paths.h"
#include "agent/targets/block/block_target.h"
#include "agent/targets/dir/dir_target.h"
#include "agent/targets/target_caps.h"
#include "agent/targets/target_kind.h"
#include "common/random.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/stream/stream_spec.h"
#include "fmt/format.h"

namespace stormark::agent {
namespace {

using common::Status;
using stormark::v1::StreamSpec;

constexpr char kFileName[] = "stream.dat";
constexpr uint64_t kStampEvery = 4096;

}  // namespace

StreamWorkload::StreamWorkload(const StreamSpec& spec, TargetConfig target,
                               std::unique_ptr<Dir> dir, std::string filesystem)
    : spec_(spec),
      target_(std::move(target)),
      dir_(std::move(dir)),
      on_files_(true),
      filesystem_(std::move(filesystem)) {}

StreamWorkload::StreamWorkload(const StreamSpec& spec, TargetConfig target,
                               std::unique_ptr<HandedOver> handed, std::string filesystem)
    : spec_(spec),
      target_(std::move(target)),
      dir_(std::move(handed->dir)),
      on_files_(true),
      reread_from_(handed->from_phase),
      reread_how_(handed->how),
      filesystem_(std::move(filesystem)) {}

StreamWorkload::StreamWorkload(const StreamSpec& spec, TargetConfig target, std::string filesystem,
                               WrittenPrefix earlier, std::shared_ptr<BlockTarget> block)
    : spec_(spec),
      target_(std::move(target)),
      on_files_(false),
      filesystem_(std::move(filesystem)),
      earlier_(std::move(earlier)),
      block_(std::move(block)) {}

StreamWorkload::StreamWorkload(const StreamSpec& spec, Device& device, WrittenPrefix earlier)
    : spec_(spec), on_files_(false), earlier_(std::move(earlier)), device_(&device) {}

StreamWorkload::~StreamWorkload() { Cleanup(); }

Status StreamWorkload::Validate(const StreamSpec& spec) { return common::CheckStreamSpec(spec); }

bool StreamWorkload::Rereads(const StreamSpec& spec, const HandedOver& handed) {
  return spec.direction() == StreamSpec::READ && handed.dir != nullptr &&
         handed.file == kFileName && handed.bytes >= spec.size_bytes();
}

std::unique_ptr<HandedOver> StreamWorkload::HandOver() {
  if (spec_.direction() != StreamSpec::WRITE || dir_ == nullptr || !ran_to_end_ ||
      written_.load() != spec_.size_bytes()) {
    return nullptr;
  }
  file_ = nullptr;
  device_ = nullptr;
  owned_device_.reset();
  auto handed = std::make_unique<HandedOver>();
  handed->dir = std::move(dir_);
  handed->file = kFileName;
  handed->bytes = spec_.size_bytes();
  handed->how = "stream write";
  return handed;
}

void StreamWorkload::StampBlock(uint64_t offset) {
  for (uint64_t at = 0; at + sizeof(uint64_t) <= spec_.block_size(); at += kStampEvery) {
    const uint64_t stamp = offset + at;
    std::memcpy(buf_->data() + at, &stamp, sizeof(stamp));
  }
}

std::string StreamWorkload::Where() const {
  if (target_.name.empty()) return device_->Describe();
  return common::StrCat("target '", target_.name, "' on ", device_->Describe());
}

Status StreamWorkload::Prepare(const std::atomic<bool>& cancelled,
                               std::vector<std::string>* warnings) {
  RETURN_IF_ERROR(Validate(spec_));
  if (dir_ != nullptr && reread_from_.empty()) {
    const std::optional<uint64_t> free_bytes = dir_->FreeBytes();
    if (free_bytes && spec_.size_bytes() > *free_bytes) {
      return absl::ResourceExhaustedError(
          common::StrCat("target '", target_.name, "' has ", common::FormatBytes(*free_bytes),
                         " free; the phase needs ", common::FormatBytes(spec_.size_bytes())));
    }
  }

  auto buf = IoBuffer::Allocate(spec_.block_size());
  if (!buf.ok()) return common::Annotate(buf.status(), "stream: bs");
  buf_ = std::make_unique<IoBuffer>(std::move(*buf));
  uint64_t seed = 0x5eed5eed ^ spec_.size_bytes();
  for (uint32_t at = 0; at < spec_.block_size(); at += sizeof(uint64_t)) {
    const uint64_t r = common::SplitMix64(&seed);
    std::memcpy(buf_->data() + at, &r, std::min<size_t>(sizeof(r), spec_.block_size() - at));
  }

  if (filesystem_ == "tmpfs" || filesystem_ == "ramfs") {
    warnings->push_back(common::StrCat("target '", target_.name, "' is on ", filesystem_,
                                       ": this measures memory, not storage"));
  }
  if (dir_ != nullptr) {
    RETURN_IF_ERROR(reread_from_.empty() ? OpenDirFile(cancelled) : OpenHandedOverFile());
  } else if (device_ == nullptr) {
    RETURN_IF_ERROR(OpenTarget(cancelled, warnings));
  }
  RETURN_IF_ERROR(CheckFits());
  device_size_ = device_->size();
  if (spec_.direction() == StreamSpec::READ && dir_ == nullptr && !CapsOf(target_).discards) {
    RETURN_IF_ERROR(LayOutOrReuse(cancelled, warnings));
  }

  // Only a file or block device opened without O_DIRECT has the page cache in front of it.
  const bool cached = file_ != nullptr && !spec_.direct();
  if (spec_.direction() == StreamSpec::WRITE) {
    if (cached && !spec_.fdatasync()) {
      warnings->push_back(
          "possibly cache-dominated: write without fdatasync or direct, so data may still be "
          "in the page cache when the clock stops (add fdatasync: true)");
    }
  } else if (cached) {
    EvictBeforeReading(warnings);
  }
  return absl::OkStatus();
}

Status StreamWorkload::OpenHandedOverFile() {
  FileDeviceOptions options;
  options.size = spec_.size_bytes();
  options.direct = spec_.direct();
  ASSIGN_OR_RETURN(auto file, OpenFileDevice(*dir_, kFileName, options));
  // The writer may have left its data in the page cache (no fdatasync): flushed here, out of
  // the timed region, so that it can be evicted.
  RETURN_IF_ERROR(file->Flush(/*data_only=*/true));
  file_ = file.get();
  owned_device_ = std::move(file);
  device_ = owned_device_.get();
  return absl::OkStatus();
}

Status StreamWorkload::OpenDirFile(const std::atomic<bool>& cancelled) {
  const bool writing = spec_.direction() == StreamSpec::WRITE;
  ASSIGN_OR_RETURN(std::unique_ptr<File> created,
                   dir_->CreateFile(kFileName, writing ? O_WRONLY : O_RDWR));
  if (const int err = created->Close(); err != 0) {
    return common::ErrnoError(common::StrCat("stream: close ", dir_->Describe(kFileName)), -err);
  }
  FileDeviceOptions options;
  options.size = spec_.size_bytes();
  options.extend = true;
  if (!writing) {
    // Laid out through the page cache (and then evicted, unless the reads are direct).
    options.writable = true;
    ASSIGN_OR_RETURN(auto layout, OpenFileDevice(*dir_, kFileName, options));
    RETURN_IF_ERROR(LayOut(*layout, cancelled));
    RETURN_IF_ERROR(layout->Close());
  }
  options.writable = writing;
  options.direct = spec_.direct();
  ASSIGN_OR_RETURN(auto file, OpenFileDevice(*dir_, kFileName, options));
  file_ = file.get();
  owned_device_ = std::move(file);
  device_ = owned_device_.get();
  return absl::OkStatus();
}

Status StreamWorkload::OpenTarget(const std::atomic<bool>& cancelled,
                                  std::vector<std::string>* warnings) {
  const bool writing = spec_.direction() == StreamSpec::WRITE;
  // A READ writes the data it will read when the target allows it: unwritten space of a thin
  // or sparse device reads as zeros without touching the disk.
  const bool lay_out = !writing && !CapsOf(target_).discards && target_.disposable;
  BlockOpenOptions options;
  options.write = writing || lay_out;
  options.direct = spec_.direct();
  if (block_ == nullptr) {
    ASSIGN_OR_RETURN(block_, BlockTarget::Resolve(target_));
  }
  auto device = OpenTargetDevice(*block_, options, cancelled, warnings);
  if (!device.ok()) {
    const bool refused =
        absl::IsPermissionDenied(device.status()) || absl::IsFailedPrecondition(device.status());
    if (!lay_out || !refused) return device.status();
    return common::Annotate(device.status(),
                            "stream rw=read first writes the data it reads on a disposable target");
  }
  owned_device_ = std::move(*device);
  device_ = owned_device_.get();
  file_ = device_->caps().file_backed ? device_ : nullptr;
  if (CapsOf(target_).discards) {
    warnings->push_back(
        "null target: no data moves; this measures stormark's own cost per I/O, not storage");
  }
  return absl::OkStatus();
}

Status StreamWorkload::CheckFits() const {
  if (spec_.size_bytes() > device_->size()) {
    return absl::OutOfRangeError(
        common::StrCat("stream: size ", common::FormatBytes(spec_.size_bytes()), " does not fit ",
                       Where(), ", which holds ", common::FormatBytes(device_->size())));
  }
  const uint32_t alignment = device_->caps().alignment;
  if (alignment > 1 && spec_.block_size() % alignment != 0) {
    return absl::InvalidArgumentError(
        common::StrCat("stream: ", device_->caps().direct ? "with direct, " : "",
                       "bs must be a multiple of ", alignment, " bytes on ", Where(), " (got ",
                       common::FormatSizeShort(spec_.block_size()), ")"));
  }
  return absl::OkStatus();
}

Status StreamWorkload::LayOut(Device& device, const std::atomic<bool>& cancelled) {
  Status status =
      FillRandom(device, 0, spec_.size_bytes(), 0x5eed5eed ^ spec_.size_bytes(), cancelled);
  if (absl::IsCancelled(status)) return absl::CancelledError("stream: aborted while laying out");
  return common::Annotate(status, "stream: laying out the data to read");
}

Status StreamWorkload::LayOutOrReuse(const std::atomic<bool>& cancelled,
                                     std::vector<std::string>* warnings) {
  // A device is writable here only when the target allows it (see OpenTarget).
  if (!device_->caps().writable) {
    // A file-backed target says exactly how much of it holds no data (nothing when all does).
    if (block_ != nullptr &&
        WarnUnallocated(*block_, 0, spec_.size_bytes(), SystemPaths().sys_dev_block, warnings)) {
      return absl::OkStatus();
    }
    warnings->push_back(common::StrCat(
        Where(),
        " is not disposable, so stream did not write the data it reads: space never "
        "written may be answered without touching the disk (thin or sparse storage returns "
        "zeros), which flatters the figure"));
    return absl::OkStatus();
  }
  if (earlier_.bytes >= spec_.size_bytes() && earlier_.device_size == device_->size()) {
    warnings->push_back(common::StrCat(
        "no layout: this reads the data that phase '", earlier_.phase_id, "' (",
        earlier_.how.empty() ? "a write" : earlier_.how, ") wrote earlier on ", Where(),
        ": this agent wrote its first ", common::FormatBytes(earlier_.bytes),
        " and ran nothing since that may discard it (a discard made outside the agent is not "
        "seen)"));
    return absl::OkStatus();
  }
  // A block file (or loop device over one) that holds data all through needs none written:
  // its filesystem says so, also for data from before this agent started.
  const std::optional<Unallocated> unallocated =
      block_ != nullptr
          ? FindUnallocated(*block_, 0, spec_.size_bytes(), SystemPaths().sys_dev_block)
          : std::nullopt;
  if (unallocated && unallocated->bytes == 0) {
    warnings->push_back(
        common::StrCat("no layout: ", unallocated->where, " holds data all through the ",
                       common::FormatBytes(spec_.size_bytes()),
                       " this reads (no holes or unwritten extents, says its filesystem)"));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(LayOut(*device_, cancelled));
  laid_out_ = spec_.size_bytes();
  return absl::OkStatus();
}

void StreamWorkload::EvictBeforeReading(std::vector<std::string>* warnings) const {
  // The device's own descriptor: the file is not reached by its path again.
  const double resident = EvictFromPageCache(file_->fd(), spec_.size_bytes());
  if (resident > 0.05) {
    warnings->push_back(fmt::format(
        "possibly cache-dominated: {:.0f}% of the data is still in the page cache after "
        "eviction (use direct: true)",
        resident * 100));
  } else if (resident < 0) {
    warnings->push_back(
        "could not check that the data left the page cache; reads may be cache-dominated");
  }
}

Status StreamWorkload::Run(RunContext& ctx) {
  const bool writing = spec_.direction() == StreamSpec::WRITE;
  // A network server's cache need not be shared by the next phase's connection: there, only
  // a flushed write counts as written (see WrittenFromStart).
  const bool count_each_write = writing && !CapsOf(target_).remote;
  common::Recorder* recorder = ctx.recorders.Add();
  const uint32_t bs = spec_.block_size();
  char* const buf = buf_->data();
  for (uint64_t offset = 0; offset < spec_.size_bytes(); offset += bs) {
    if (ctx.cancelled.load(std::memory_order_relaxed)) {
      return absl::CancelledError("stream: aborted");
    }
    if (writing) StampBlock(offset);
    const int64_t start = ctx.clock.MonotonicNanos();
    RETURN_IF_ERROR(writing ? device_->WriteAt(offset, bs, buf) : device_->ReadAt(offset, bs, buf));
    const int64_t end = ctx.clock.MonotonicNanos();
    if (count_each_write) written_.store(offset + bs, std::memory_order_relaxed);
    recorder->Record(end, static_cast<uint64_t>(end - start), bs);
  }
  if (spec_.fdatasync()) {
    const int64_t start = ctx.clock.MonotonicNanos();
    RETURN_IF_ERROR(device_->Flush(/*data_only=*/true));
    const int64_t end = ctx.clock.MonotonicNanos();
    recorder->Record(end, static_cast<uint64_t>(end - start), 0);
    if (writing) written_.store(spec_.size_bytes(), std::memory_order_relaxed);
  }
  RETURN_IF_ERROR(file_ != nullptr ? file_->Close() : absl::OkStatus());
  ran_to_end_ = true;
  return absl::OkStatus();
}

CleanupReport StreamWorkload::Cleanup() {
  file_ = nullptr;
  if (owned_device_ != nullptr) {
    device_ = nullptr;
    owned_device_.reset();
  }
  return dir_ ? dir_->Cleanup() : CleanupReport();
}

WrittenPrefix StreamWorkload::WrittenFromStart() const {
  if (on_files_ || CapsOf(target_).discards) return {};
  WrittenPrefix written;
  written.bytes = std::max(laid_out_, written_.load(std::memory_order_relaxed));
  written.device_size = device_size_;
  written.how = spec_.direction() == StreamSpec::WRITE ? "stream write" : "stream read's layout";
  return written;
}

void StreamWorkload::AddToResult(stormark::v1::PhaseResult* result) const {
  if (device_ == nullptr) return;
  (*result->mutable_resolved())["device"] = device_->Describe();
  if (!reread_from_.empty()) {
    // Not a qualification of the figure (the file was flushed and evicted: any eviction that
    // failed has its own warning), but where the data came from.
    (*result->mutable_resolved())["data"] =
        common::StrCat("the file phase '", reread_from_, "' (", reread_how_,
                       ") wrote just before, flushed and evicted from the cache");
  }
  for (const auto& [key, value] : device_->Stats()) (*result->mutable_device_stats())[key] = value;
}

}  // namespace stormark::agent
