#include "agent/workloads/randio/randio.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <latch>
#include <random>
#include <thread>

#include "agent/devices/file_device.h"
#include "agent/devices/fill.h"
#include "agent/devices/io_buffer.h"
#include "agent/devices/page_cache.h"
#include "agent/host/system_paths.h"
#include "agent/targets/block/block_target.h"
#include "agent/targets/dir/dir_target.h"
#include "agent/targets/target_caps.h"
#include "agent/targets/target_kind.h"
#include "agent/runner/thread_top.h"
#include "agent/workloads/fd.h"
#include "common/memory_estimate.h"
#include "common/random.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/randio/randio_spec.h"
#include "fmt/format.h"

namespace stormark::agent {

static_assert(RandioWorkload::kDefaultDirFileSize == common::kRandioDefaultDirFileBytes,
              "common/memory_estimate.h counts the verify book of the default file");

namespace {

using common::Status;
using stormark::v1::RandioSpec;

constexpr char kFileName[] = "randio.dat";
constexpr int64_t kPollNanos = 10'000'000;

Engine EngineOf(const RandioSpec& spec) {
  switch (spec.engine()) {
    case RandioSpec::IO_URING:
      return Engine::kIoUring;
    case RandioSpec::LIBAIO:
      return Engine::kLibaio;
    default:
      return Engine::kPsync;
  }
}

// fio's bssplit shares as the offset source takes them.
std::vector<BlockSizeShare> SplitOf(
    const google::protobuf::RepeatedPtrField<RandioSpec::BlockSizeShare>& split) {
  std::vector<BlockSizeShare> out;
  for (const auto& share : split) out.push_back({share.bs(), share.percent()});
  return out;
}

std::string PatternName(RandioSpec::Pattern rw) {
  std::string name = RandioSpec::Pattern_Name(rw);
  return common::ToLower(name);
}

bool Reads(const RandioSpec& spec) {
  return spec.rw() == RandioSpec::READ || spec.rw() == RandioSpec::RANDREAD ||
         ((spec.rw() == RandioSpec::RANDRW || spec.rw() == RandioSpec::READWRITE) &&
          (!spec.has_rwmixread() || spec.rwmixread() > 0));
}

}  // namespace

RandioWorkload::RandioWorkload(const RandioSpec& spec, TargetConfig target,
                               std::unique_ptr<Dir> dir, HostFacts host, std::string filesystem,
                               std::shared_ptr<BlockTarget> block)
    : spec_(spec),
      target_(std::move(target)),
      dir_(std::move(dir)),
      host_(std::move(host)),
      filesystem_(std::move(filesystem)),
      block_(std::move(block)) {}

RandioWorkload::RandioWorkload(const RandioSpec& spec, Device& device, HostFacts host)
    : spec_(spec), host_(std::move(host)), device_(&device) {}

RandioWorkload::~RandioWorkload() { Cleanup(); }

Status RandioWorkload::OpenDevice(const std::atomic<bool>& cancelled,
                                  std::vector<std::string>* warnings) {
  if (device_ != nullptr) return absl::OkStatus();  // Given by the caller.
  const bool writes = common::RandioWrites(spec_);
  if (dir_ == nullptr) {
    BlockOpenOptions options;
    options.write = writes;
    options.direct = spec_.direct();
    options.engine = EngineOf(spec_);
    if (block_ == nullptr) {
      ASSIGN_OR_RETURN(block_, BlockTarget::Resolve(target_));
    }
    ASSIGN_OR_RETURN(owned_device_, OpenTargetDevice(*block_, options, cancelled, warnings));
    device_ = owned_device_.get();
    return absl::OkStatus();
  }
  // A dir target: this phase's own file, filled so that reads never read holes.
  const uint64_t size = spec_.size_bytes() == 0 ? kDefaultDirFileSize : spec_.size_bytes();
  const uint64_t file_size = offset_ + uint64_t{jobs_count_ - 1} * offset_increment_ + size;
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, dir_->CreateFile(kFileName, O_RDWR));
  if (const int err = file->Truncate(file_size); err != 0) {
    return common::ErrnoError(common::StrCat("randio: cannot size ", dir_->Describe(kFileName)),
                              -err);
  }
  if (const int err = file->Close(); err != 0) {
    return common::ErrnoError(common::StrCat("randio: close ", dir_->Describe(kFileName)), -err);
  }
  if (!spec_.verify()) {
    FileDeviceOptions fill_options;
    fill_options.writable = true;
    ASSIGN_OR_RETURN(auto filler, OpenFileDevice(*dir_, kFileName, fill_options));
    RETURN_IF_ERROR(FillRandom(*filler, 0, file_size, seed_, cancelled));
  }
  FileDeviceOptions options;
  // Verify lays out its own data through this device, after the regions are known.
  options.writable = writes || spec_.verify();
  options.direct = spec_.direct();
  options.engine = EngineOf(spec_);
  ASSIGN_OR_RETURN(owned_device_, OpenFileDevice(*dir_, kFileName, options));
  device_ = owned_device_.get();
  return absl::OkStatus();
}

Status RandioWorkload::ResolveRegions() {
  // Percentages of the device, in whole blocks (fio rounds them down as well).
  const uint64_t device_size = device_->size();
  auto percent_of_device = [&](uint32_t percent) {
    return device_size / 100 * percent + device_size % 100 * percent / 100;
  };
  if (spec_.offset_percent() != 0) {
    offset_ = percent_of_device(spec_.offset_percent()) / bs_min_ * bs_min_;
  }
  if (spec_.offset_increment_percent() != 0) {
    offset_increment_ = percent_of_device(spec_.offset_increment_percent()) / bs_min_ * bs_min_;
  }
  const uint64_t span_extra = uint64_t{jobs_count_ - 1} * offset_increment_;
  const uint64_t fixed = offset_ + span_extra;
  if (spec_.size_percent() != 0) {
    region_size_ = percent_of_device(spec_.size_percent()) / bs_min_ * bs_min_;
  } else if (spec_.size_bytes() != 0) {
    region_size_ = spec_.size_bytes();
  } else if (dir_ != nullptr) {
    region_size_ = kDefaultDirFileSize;
  } else {
    // The rest of the device after the offsets, in whole blocks (as fio does).
    region_size_ = device_size > fixed ? (device_size - fixed) / bs_min_ * bs_min_ : 0;
  }
  const std::string on = common::StrCat(" on ", device_->Describe());
  if (region_size_ < bs_max_) {
    return absl::InvalidArgumentError(common::StrCat(
        "randio: the region is smaller than one block (", common::FormatSizeShort(bs_max_), ")", on,
        ", of ", common::FormatBytes(device_->size())));
  }
  if (fixed + region_size_ > device_->size()) {
    return absl::OutOfRangeError(common::StrCat(
        "randio: offset ", common::FormatSizeShort(offset_), " + size ",
        common::FormatSizeShort(region_size_),
        jobs_count_ > 1 ? common::StrCat(" + ", jobs_count_ - 1, " x offset_increment ",
                                         common::FormatSizeShort(offset_increment_))
                        : "",
        " reaches beyond the end", on, " (", common::FormatBytes(device_->size()), ")"));
  }
  const uint32_t alignment = device_->caps().alignment;
  if (alignment > 1 &&
      (bs_min_ % alignment != 0 || offset_ % alignment != 0 || offset_increment_ % alignment != 0 ||
       spec_.blockalign() % alignment != 0)) {
    return absl::InvalidArgumentError(common::StrCat(
        "randio: with direct, bs, offset, offset_increment and blockalign must be multiples of ",
        alignment, " bytes", on));
  }
  return absl::OkStatus();
}

Status RandioWorkload::Prepare(const std::atomic<bool>& cancelled,
                               std::vector<std::string>* warnings) {
  RETURN_IF_ERROR(common::CheckRandioSpec(spec_));
  jobs_count_ = std::max<uint32_t>(1, spec_.numjobs());
  bs_min_ = spec_.bs_min();
  bs_max_ = spec_.bs_max() == 0 ? bs_min_ : spec_.bs_max();
  seed_ = spec_.seed() != 0 ? spec_.seed() : (std::random_device{}() | uint64_t{1} << 32);
  offset_ = spec_.offset_bytes();
  offset_increment_ = spec_.offset_increment_bytes();
  if (dir_ != nullptr && (spec_.size_percent() != 0 || spec_.offset_percent() != 0 ||
                          spec_.offset_increment_percent() != 0)) {
    return absl::InvalidArgumentError(
        "randio: size, offset and offset_increment as a percentage need a block target (the "
        "phase creates its own file in a dir target: give its size in bytes)");
  }
  RETURN_IF_ERROR(OpenDevice(cancelled, warnings));
  RETURN_IF_ERROR(ResolveRegions());
  // A synchronous engine runs one request at a time whatever the depth (as fio's psync).
  iodepth_ = device_->caps().async ? std::max<uint32_t>(1, spec_.iodepth()) : 1;

  const uint64_t span_end = offset_ + uint64_t{jobs_count_ - 1} * offset_increment_ + region_size_;
  if (!spec_.verify() && dir_ == nullptr && owned_device_ != nullptr && Reads(spec_)) {
    // Verify lays out all it reads; other reads may land in a sparse file's holes.
    WarnUnallocated(*block_, offset_, span_end, SystemPaths().sys_dev_block, warnings);
  }
  if (spec_.verify()) {
    const uint32_t unit = bs_min_ % 4096 == 0 && spec_.blockalign() % 4096 == 0 &&
                                  offset_ % 4096 == 0 && offset_increment_ % 4096 == 0 &&
                                  region_size_ % 4096 == 0
                              ? 4096
                              : 512;
    const uint64_t span = span_end - offset_;
    if (span / unit > VerifyBook::kMaxUnits) {
      return absl::InvalidArgumentError(
          common::StrCat("randio: verify tracks at most ", VerifyBook::kMaxUnits, " units of ",
                         unit, " bytes (", common::FormatBytes(VerifyBook::kMaxUnits * unit),
                         "); the region is ", common::FormatBytes(span)));
    }
    uint64_t salt_state = seed_;
    book_ = std::make_unique<VerifyBook>(offset_, span, unit,
                                         static_cast<uint32_t>(common::SplitMix64(&salt_state)));
    RETURN_IF_ERROR(LayOutVerifiable(cancelled));
    if (dir_ == nullptr && offset_ == 0 &&
        (jobs_count_ == 1 || offset_increment_ <= region_size_)) {
      laid_out_.bytes = span_end;
      laid_out_.device_size = device_->size();
      laid_out_.how = "randio's verify layout";
    }
  }
  // Buffered reads must start from the disk, not from the data just laid out.
  const Device* file = device_->caps().file_backed ? device_ : nullptr;
  if (file != nullptr && !spec_.direct() && Reads(spec_)) {
    // The device's own descriptor: the file or device is not reached by its path again.
    if (file->fd() >= 0) {
      const double resident = EvictFromPageCache(file->fd(), device_->size());
      if (resident > 0.05) {
        warnings->push_back(fmt::format(
            "possibly cache-dominated: {:.0f}% of the data is still in the page cache after "
            "eviction (use direct: true)",
            resident * 100));
      }
    }
  }
  for (uint32_t j = 0; j < jobs_count_; ++j) {
    if (cancelled.load()) return absl::CancelledError("randio: aborted while preparing");
    ASSIGN_OR_RETURN(auto job, RandioJob::Create(PlanFor(j), *device_));
    jobs_.push_back(std::move(job));
  }
  AddWarnings(warnings);
  return absl::OkStatus();
}

void RandioWorkload::AddWarnings(std::vector<std::string>* warnings) const {
  if (filesystem_ == "tmpfs" || filesystem_ == "ramfs") {
    warnings->push_back(common::StrCat("target '", target_.name, "' is on ", filesystem_,
                                       ": this measures memory, not storage"));
  }
  if (CapsOf(target_).discards) {
    warnings->push_back(
        "null target: no data moves; this measures stormark's own cost per I/O, not storage");
  }
  if (EngineOf(spec_) == Engine::kLibaio && device_->caps().file_backed &&
      !device_->caps().direct) {
    warnings->push_back(common::StrCat(
        "engine libaio without direct: the kernel runs buffered AIO inside io_submit, one "
        "request at a time",
        spec_.iodepth() > 1 ? common::StrCat(", so iodepth ", spec_.iodepth(), " acts as 1") : "",
        " (as with fio; use direct: true)"));
  }
  if (!device_->caps().async && spec_.iodepth() > 1) {
    warnings->push_back(common::StrCat("engine ", EngineName(EngineOf(spec_)),
                                       " runs one request at a time: iodepth ", spec_.iodepth(),
                                       " acts as 1 (use engine io_uring for a real queue)"));
  }
  if (!device_->caps().coherent_queues && jobs_count_ > 1) {
    warnings->push_back(common::StrCat(
        "target '", target_.name, "': the server does not offer multi-conn, so each of the ",
        jobs_count_,
        " jobs' connections may keep its own cache and a flush covers only its own "
        "writes; flushed-write figures may be too good (use numjobs: 1, or a server with "
        "multi-conn)"));
  }
  // A device without a page cache in front of it (AoE, NBD, iSCSI) needs no cache warnings.
  if (!spec_.direct() && !device_->caps().direct && CapsOf(target_).page_cache) {
    const uint64_t span = offset_ + uint64_t{jobs_count_ - 1} * offset_increment_ + region_size_;
    if (Reads(spec_) && host_.ram_bytes != 0 && span < 2 * host_.ram_bytes &&
        (spec_.time_based() || common::RandioWrites(spec_))) {
      warnings->push_back(common::StrCat(
          "possibly cache-dominated: buffered reads over ", common::FormatBytes(span),
          ", under 2 x RAM (", common::FormatBytes(2 * host_.ram_bytes),
          "): data read or written once may be read again from the page cache (use direct: "
          "true)"));
    }
    if (common::RandioWrites(spec_) && spec_.fsync() == 0 && spec_.fdatasync() == 0) {
      warnings->push_back(
          "possibly cache-dominated: buffered writes without fsync or fdatasync may still be "
          "in the page cache when the clock stops (use direct: true, or fdatasync: N)");
    }
  }
}

JobPlan RandioWorkload::PlanFor(uint32_t job) const {
  JobPlan plan;
  plan.job = job;
  plan.iodepth = iodepth_;
  plan.offsets.rw = spec_.rw();
  plan.offsets.rwmixread = spec_.has_rwmixread() ? spec_.rwmixread() : 50;
  plan.offsets.base = offset_ + uint64_t{job} * offset_increment_;
  plan.offsets.size = region_size_;
  plan.offsets.bs_min = bs_min_;
  plan.offsets.bs_max = bs_max_;
  plan.offsets.zipf = spec_.random_distribution() == RandioSpec::ZIPF;
  plan.offsets.zipf_theta = spec_.zipf_theta();
  plan.offsets.time_based = spec_.time_based();
  uint64_t seed = seed_ + job;
  plan.offsets.seed = common::SplitMix64(&seed);
  plan.data_seed = common::SplitMix64(&seed);
  plan.flush_every = spec_.fsync() != 0 ? spec_.fsync() : spec_.fdatasync();
  plan.flush_data_only = spec_.fsync() == 0;
  plan.rate_iops = spec_.rate_iops();
  plan.rate_bytes = spec_.rate_bytes();
  plan.rate_poisson = spec_.rate_poisson();
  plan.offsets.read_split = SplitOf(spec_.bssplit());
  plan.offsets.write_split = SplitOf(spec_.write_bssplit());
  plan.offsets.align = spec_.blockalign();
  plan.offsets.norandommap = spec_.norandommap();
  plan.batch_submit = spec_.iodepth_batch_submit();
  plan.batch_complete_min = spec_.iodepth_batch_complete_min();
  plan.batch_complete_max = spec_.iodepth_batch_complete_max();
  plan.iodepth_low = spec_.iodepth_low();
  plan.think_nanos = spec_.thinktime_nanos();
  plan.think_spin_nanos = spec_.thinktime_spin_nanos();
  plan.think_blocks = spec_.thinktime_blocks();
  plan.end_fsync = spec_.end_fsync() && common::RandioWrites(spec_);
  return plan;
}

Status RandioWorkload::LayOutVerifiable(const std::atomic<bool>& cancelled) {
  constexpr uint32_t kChunk = common::kLayoutChunkBytes;
  ASSIGN_OR_RETURN(IoBuffer buf, IoBuffer::Allocate(kChunk));
  common::Xoshiro256 random(seed_ ^ 0x1a7047);
  const uint32_t generation = book_->NextGeneration();
  const uint64_t end = book_->base() + book_->size();
  for (uint32_t j = 0; j < jobs_count_; ++j) {
    const uint64_t begin = offset_ + uint64_t{j} * offset_increment_;
    for (uint64_t at = begin; at < std::min(end, begin + region_size_);) {
      if (cancelled.load(std::memory_order_relaxed)) {
        return absl::CancelledError("randio: aborted while laying out verifiable data");
      }
      const uint32_t n =
          static_cast<uint32_t>(std::min<uint64_t>(kChunk, begin + region_size_ - at));
      random.Fill(buf.data(), n);
      book_->Stamp(buf.data(), at, n, generation, UINT32_MAX);
      RETURN_IF_ERROR(device_->WriteAt(at, n, buf.data()));
      book_->Written(at, n, generation);
      at += n;
    }
  }
  return device_->Flush(/*data_only=*/true);
}

WrittenPrefix RandioWorkload::WrittenFromStart() const { return laid_out_; }

Status RandioWorkload::ReadBack(const std::atomic<bool>& cancelled) {
  constexpr uint32_t kChunk = common::kLayoutChunkBytes;
  ASSIGN_OR_RETURN(IoBuffer buf, IoBuffer::Allocate(kChunk));
  const uint64_t end = book_->base() + book_->size();
  for (uint64_t at = book_->base(); at < end;) {
    if (cancelled.load(std::memory_order_relaxed)) {
      return absl::CancelledError("randio: aborted while reading back for verification");
    }
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(kChunk, end - at));
    RETURN_IF_ERROR(device_->ReadAt(at, n, buf.data()));
    book_->Check(buf.data(), at, n, "read-back");
    at += n;
  }
  return absl::OkStatus();
}

Status RandioWorkload::Run(RunContext& ctx) {
  // startdelay, then ramp_time, are unmeasured: the timed region restarts after both.
  const int64_t lead = spec_.startdelay_nanos() + spec_.ramp_time_nanos();
  std::atomic<bool> measuring{lead == 0};
  const int64_t start = ctx.clock.MonotonicNanos();
  const int64_t deadline = spec_.runtime_nanos() == 0 ? 0 : start + lead + spec_.runtime_nanos();
  const int64_t job_start = spec_.startdelay_nanos() == 0 ? 0 : start + spec_.startdelay_nanos();
  const JobShared shared{
      ctx.clock,   ctx.cancelled, measuring, ctx.recorders,
      book_.get(), deadline,      job_start, /*start_measured=*/spec_.ramp_time_nanos() == 0};

  std::vector<Status> statuses(jobs_.size());
  std::atomic<size_t> running{jobs_.size()};
  std::atomic<bool> first_done{false};
  // The jobs start together once every thread exists; when one cannot be started (out of
  // threads or memory), none runs and the phase fails.
  std::latch created(1);
  std::atomic<bool> start_failed{false};
  std::vector<std::thread> threads;
  threads.reserve(jobs_.size());
  Status start_error;
  for (size_t j = 0; j < jobs_.size(); ++j) {
    try {
      threads.emplace_back([&, j] {
        created.wait();
        if (!start_failed.load()) {
          statuses[j] = CatchAtThreadTop("randio job", [&] { return jobs_[j]->Run(shared); });
        }
        if (!first_done.exchange(true) && measuring.load()) {
          first_done_bytes_ = ctx.recorders.TotalBytes();
          first_done_ops_ = ctx.recorders.TotalOps();
        }
        running.fetch_sub(1);
      });
    } catch (const std::exception& e) {  // std::system_error, std::bad_alloc
      start_error = absl::ResourceExhaustedError(
          common::StrCat("randio: cannot start the thread of job ", j, " of ", jobs_.size(), ": ",
                         e.what(), " (lower numjobs)"));
      break;
    }
  }
  if (!start_error.ok()) {
    start_failed = true;
    created.count_down();
    for (std::thread& t : threads) t.join();
    ctx.region.Close();
    return start_error;
  }
  created.count_down();
  if (!measuring.load()) {
    const int64_t ramp_end = start + lead;
    while (running.load() > 0 && !ctx.cancelled.load() && ctx.clock.MonotonicNanos() < ramp_end) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(
          std::clamp<int64_t>(ramp_end - ctx.clock.MonotonicNanos(), 0, kPollNanos)));
    }
    if (running.load() > 0 && ctx.region.Restart()) {
      measuring.store(true, std::memory_order_release);
    } else {
      run_warnings_.push_back("every job ended before the ramp did: nothing was measured");
    }
  }
  for (std::thread& t : threads) t.join();
  ctx.region.Close();

  const int64_t region_start = ctx.region.span().start_mono;
  int64_t first = INT64_MAX, last = 0;
  for (const auto& job : jobs_) {
    first = std::min(first, job->done_mono());
    last = std::max(last, job->done_mono());
  }
  if (measuring.load() && !jobs_.empty()) {
    first_done_nanos_ = std::max<int64_t>(0, first - region_start);
    last_done_nanos_ = std::max<int64_t>(0, last - region_start);
  }

  Status status;
  for (const Status& s : statuses) {
    if (!s.ok() && (status.ok() || absl::IsCancelled(status))) status = s;
  }
  if (book_ != nullptr && (status.ok() || absl::IsDataLoss(status)) && !ctx.cancelled.load()) {
    const Status read_back = ReadBack(ctx.cancelled);
    if (!read_back.ok() && status.ok()) status = read_back;
    const auto report = book_->Report();
    if (status.ok() && report.mismatches() > 0) {
      const auto& m = report.first_mismatches(0);
      status = absl::DataLossError(
          common::StrCat("verify: ", report.mismatches(), " of ", report.units_checked(),
                         " units differ from "
                         "what was written; first at offset ",
                         m.offset(), ": ", m.kind(), " (", m.field(), ": expected ", m.expected(),
                         ", found ", m.actual(), ")"));
    }
  }
  return status;
}

CleanupReport RandioWorkload::Cleanup() {
  jobs_.clear();
  owned_device_.reset();
  return dir_ ? dir_->Cleanup() : CleanupReport();
}

void RandioWorkload::AddToResult(stormark::v1::PhaseResult* result) const {
  auto add = [&](const char* name, auto recorder_of) {
    common::Recorder merged(0);
    for (const auto& job : jobs_) {
      if (const common::Recorder* r = recorder_of(*job)) merged.Merge(*r);
    }
    if (merged.ops() == 0) return;
    stormark::v1::Measurement* m = result->add_measurements();
    m->set_name(name);
    m->set_bytes(merged.bytes());
    m->set_ops(merged.ops());
    m->set_elapsed_nanos(result->elapsed_nanos());
    merged.latency().ToProto(m->mutable_latency());
  };
  add("read", [](const RandioJob& j) { return j.read_recorder(); });
  add("write", [](const RandioJob& j) { return j.write_recorder(); });
  add("flush", [](const RandioJob& j) { return j.flush_recorder(); });

  if (jobs_.size() > 1) {
    result->set_first_done_nanos(first_done_nanos_);
    result->set_last_done_nanos(last_done_nanos_);
    result->set_first_done_bytes(first_done_bytes_);
    result->set_first_done_ops(first_done_ops_);
  }
  if (book_ != nullptr) *result->mutable_verify() = book_->Report();
  for (const auto& w : run_warnings_) result->add_warnings(w);

  auto& resolved = *result->mutable_resolved();
  resolved["rw"] = PatternName(spec_.rw());
  resolved["bs"] = bs_min_ == bs_max_ ? common::FormatSizeShort(bs_min_)
                                      : common::StrCat(common::FormatSizeShort(bs_min_), "-",
                                                       common::FormatSizeShort(bs_max_));
  auto split_text = [](const auto& split) {
    std::string text;
    for (const auto& share : split) {
      if (!text.empty()) text += ":";
      text += common::StrCat(common::FormatSizeShort(share.bs()), "/", share.percent());
    }
    return text;
  };
  if (spec_.bssplit_size() > 0) resolved["bssplit"] = split_text(spec_.bssplit());
  if (spec_.write_bssplit_size() > 0) resolved["write_bssplit"] = split_text(spec_.write_bssplit());
  resolved["iodepth"] = common::StrCat(iodepth_);
  resolved["numjobs"] = common::StrCat(jobs_count_);
  resolved["size"] = common::FormatSizeShort(region_size_);
  resolved["offset"] = common::FormatSizeShort(offset_);
  if (offset_increment_ != 0) {
    resolved["offset_increment"] = common::FormatSizeShort(offset_increment_);
  }
  resolved["engine"] =
      !CapsOf(target_).engines ? target_.kind : std::string(EngineName(EngineOf(spec_)));
  resolved["direct"] = spec_.direct() ? "true" : "false";
  resolved["seed"] = common::StrCat(seed_);
  if (device_ != nullptr) {
    resolved["device"] = device_->Describe();
    for (const auto& [key, value] : device_->Stats())
      (*result->mutable_device_stats())[key] = value;
  }
}

}  // namespace stormark::agent
