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

// fio's bssplit shares as the offset source takes them.
std::vector<BlockSizeShare> SplitOf(
    const google::protobuf::RepeatedPtrField<RandioSpec::BlockSizeShare>& split) {
  std::vector<BlockSizeShare> out;
  for (const auto& share : split) out.push_back({share.bs(), share.percent()});
  return out;
}

bool Reads(const RandioSpec& spec) {
  return spec.rw() == RandioSpec::READ || spec.rw() == RandioSpec::RANDREAD ||
         ((spec.rw() == RandioSpec::RANDRW || spec.rw() == RandioSpec::READWRITE) &&
          (!spec.has_rwmixread() || spec.rwmixread() > 0));
}

}  // namespace

Engine RandioWorkload::EngineOf(const RandioSpec& spec) {
  switch (spec.engine()) {
    case RandioSpec::IO_URING:
      return Engine::kIoUring;
    case RandioSpec::LIBAIO:
      return Engine::kLibaio;
    default:
      return Engine::kPsync;
  }
}

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
  // A dir target: this phase's own file, filled so that reads never read holes; the jobs of
  // a run group share it, as large as the largest span.
  uint64_t file_size = 0;
  for (const Member& m : members_) {
    const uint64_t size = m.spec.size_bytes() == 0 ? kDefaultDirFileSize : m.spec.size_bytes();
    file_size =
        std::max(file_size, m.offset + uint64_t{m.jobs_count - 1} * m.offset_increment + size);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, dir_->CreateFile(kFileName, O_RDWR));
  if (const int err = file->Truncate(file_size); err != 0) {
    return common::ErrnoError(common::StrCat("randio: cannot size ", dir_->Describe(kFileName)),
                              -err);
  }
  if (const int err = file->Close(); err != 0) {
    return common::ErrnoError(common::StrCat("randio: close ", dir_->Describe(kFileName)), -err);
  }
  // Verify lays out its own data over its jobs' regions; anything else is read as filled.
  const bool all_verify = std::all_of(members_.begin(), members_.end(),
                                      [](const Member& m) { return m.spec.verify(); });
  if (!all_verify) {
    FileDeviceOptions fill_options;
    fill_options.writable = true;
    ASSIGN_OR_RETURN(auto filler, OpenFileDevice(*dir_, kFileName, fill_options));
    RETURN_IF_ERROR(FillRandom(*filler, 0, file_size, seed_, cancelled));
  }
  FileDeviceOptions options;
  // Verify lays out its own data through this device, after the regions are known (`writes`
  // counts that).
  options.writable = writes;
  options.direct = spec_.direct();
  options.engine = EngineOf(spec_);
  ASSIGN_OR_RETURN(owned_device_, OpenFileDevice(*dir_, kFileName, options));
  device_ = owned_device_.get();
  return absl::OkStatus();
}

Status RandioWorkload::ResolveRegions(Member& m) const {
  const RandioSpec& spec = m.spec;
  // Percentages of the device, in whole blocks (fio rounds them down as well).
  const uint64_t device_size = device_->size();
  auto percent_of_device = [&](uint32_t percent) {
    return device_size / 100 * percent + device_size % 100 * percent / 100;
  };
  if (spec.offset_percent() != 0) {
    m.offset = percent_of_device(spec.offset_percent()) / m.bs_min * m.bs_min;
  }
  if (spec.offset_increment_percent() != 0) {
    m.offset_increment = percent_of_device(spec.offset_increment_percent()) / m.bs_min * m.bs_min;
  }
  const uint64_t span_extra = uint64_t{m.jobs_count - 1} * m.offset_increment;
  const uint64_t fixed = m.offset + span_extra;
  if (spec.size_percent() != 0) {
    m.region_size = percent_of_device(spec.size_percent()) / m.bs_min * m.bs_min;
  } else if (spec.size_bytes() != 0) {
    m.region_size = spec.size_bytes();
  } else if (dir_ != nullptr) {
    m.region_size = kDefaultDirFileSize;
  } else {
    // The rest of the device after the offsets, in whole blocks (as fio does).
    m.region_size = device_size > fixed ? (device_size - fixed) / m.bs_min * m.bs_min : 0;
  }
  const std::string job = members_.size() > 1 ? common::StrCat("job '", spec.name(), "': ") : "";
  const std::string on = common::StrCat(" on ", device_->Describe());
  if (m.region_size < m.bs_max) {
    return absl::InvalidArgumentError(common::StrCat(
        "randio: ", job, "the region is smaller than one block (",
        common::FormatSizeShort(m.bs_max), ")", on, ", of ", common::FormatBytes(device_->size())));
  }
  if (fixed + m.region_size > device_->size()) {
    return absl::OutOfRangeError(common::StrCat(
        "randio: ", job, "offset ", common::FormatSizeShort(m.offset), " + size ",
        common::FormatSizeShort(m.region_size),
        m.jobs_count > 1 ? common::StrCat(" + ", m.jobs_count - 1, " x offset_increment ",
                                          common::FormatSizeShort(m.offset_increment))
                         : "",
        " reaches beyond the end", on, " (", common::FormatBytes(device_->size()), ")"));
  }
  const uint32_t alignment = device_->caps().alignment;
  if (alignment > 1 &&
      (m.bs_min % alignment != 0 || m.offset % alignment != 0 ||
       m.offset_increment % alignment != 0 || spec.blockalign() % alignment != 0)) {
    return absl::InvalidArgumentError(common::StrCat(
        "randio: ", job,
        "with direct, bs, offset, offset_increment and blockalign must be multiples of ", alignment,
        " bytes", on));
  }
  return absl::OkStatus();
}

Status RandioWorkload::Prepare(const std::atomic<bool>& cancelled,
                               std::vector<std::string>* warnings) {
  RETURN_IF_ERROR(common::CheckRandioSpec(spec_));
  seed_ = spec_.seed() != 0 ? spec_.seed() : (std::random_device{}() | uint64_t{1} << 32);
  members_.clear();
  for (int i = -1; i < spec_.group_size(); ++i) {
    Member m;
    m.spec = i < 0 ? spec_ : spec_.group(i);
    m.spec.clear_group();
    m.jobs_count = std::max<uint32_t>(1, m.spec.numjobs());
    m.bs_min = m.spec.bs_min();
    m.bs_max = m.spec.bs_max() == 0 ? m.bs_min : m.spec.bs_max();
    m.offset = m.spec.offset_bytes();
    m.offset_increment = m.spec.offset_increment_bytes();
    if (dir_ != nullptr && (m.spec.size_percent() != 0 || m.spec.offset_percent() != 0 ||
                            m.spec.offset_increment_percent() != 0)) {
      return absl::InvalidArgumentError(
          "randio: size, offset and offset_increment as a percentage need a block target (the "
          "phase creates its own file in a dir target: give its size in bytes)");
    }
    members_.push_back(std::move(m));
  }
  RETURN_IF_ERROR(OpenDevice(cancelled, warnings));
  // Where the jobs read, and where jobs read that verify does not lay out.
  uint64_t read_end = 0, unlaid_begin = UINT64_MAX, unlaid_end = 0;
  for (Member& m : members_) {
    RETURN_IF_ERROR(ResolveRegions(m));
    // A synchronous engine runs one request at a time whatever the depth (as fio's psync).
    m.iodepth = device_->caps().async ? std::max<uint32_t>(1, m.spec.iodepth()) : 1;
    if (!Reads(m.spec)) continue;
    read_end = std::max(read_end, m.SpanEnd());
    if (!m.spec.verify()) {
      unlaid_begin = std::min(unlaid_begin, m.offset);
      unlaid_end = std::max(unlaid_end, m.SpanEnd());
    }
  }
  if (dir_ == nullptr && owned_device_ != nullptr && unlaid_end > 0) {
    // Reads that verify does not lay out may land in a sparse file's holes.
    WarnUnallocated(*block_, unlaid_begin, unlaid_end, SystemPaths().sys_dev_block, warnings);
  }
  RETURN_IF_ERROR(SetUpVerify(cancelled));
  // Buffered reads must start from the disk, not from the data just laid out.
  const Device* file = device_->caps().file_backed ? device_ : nullptr;
  if (file != nullptr && !spec_.direct() && read_end > 0) {
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
  for (uint32_t i = 0; i < members_.size(); ++i) {
    Member& m = members_[i];
    m.first_job = static_cast<uint32_t>(jobs_.size());
    for (uint32_t j = 0; j < m.jobs_count; ++j) {
      if (cancelled.load()) return absl::CancelledError("randio: aborted while preparing");
      ASSIGN_OR_RETURN(auto job, RandioJob::Create(PlanFor(m, j), *device_));
      jobs_.push_back(std::move(job));
      member_of_.push_back(i);
    }
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
  uint32_t deepest = 0;
  for (const Member& m : members_) deepest = std::max(deepest, m.spec.iodepth());
  if (EngineOf(spec_) == Engine::kLibaio && device_->caps().file_backed &&
      !device_->caps().direct) {
    warnings->push_back(common::StrCat(
        "engine libaio without direct: the kernel runs buffered AIO inside io_submit, one "
        "request at a time",
        deepest > 1 ? common::StrCat(", so iodepth ", deepest, " acts as 1") : "",
        " (as with fio; use direct: true)"));
  }
  if (!device_->caps().async && deepest > 1) {
    warnings->push_back(common::StrCat("engine ", EngineName(EngineOf(spec_)),
                                       " runs one request at a time: iodepth ", deepest,
                                       " acts as 1 (use engine io_uring for a real queue)"));
  }
  if (!device_->caps().coherent_queues && jobs_.size() > 1) {
    warnings->push_back(common::StrCat(
        "target '", target_.name, "': the server does not offer multi-conn, so each of the ",
        jobs_.size(),
        " jobs' connections may keep its own cache and a flush covers only its own "
        "writes; flushed-write figures may be too good (use numjobs: 1, or a server with "
        "multi-conn)"));
  }
  for (const Member& m : members_) AddMemberWarnings(m, warnings);
}

void RandioWorkload::AddMemberWarnings(const Member& m, std::vector<std::string>* warnings) const {
  // A device without a page cache in front of it (AoE, NBD, iSCSI) needs no cache warnings.
  if (spec_.direct() || device_->caps().direct || !CapsOf(target_).page_cache) return;
  const std::string job = members_.size() > 1 ? common::StrCat("job '", m.spec.name(), "': ") : "";
  const bool writes = common::RandioJobWrites(m.spec);
  const uint64_t span = m.SpanEnd();
  if (Reads(m.spec) && host_.ram_bytes != 0 && span < 2 * host_.ram_bytes &&
      (m.spec.time_based() || writes)) {
    warnings->push_back(common::StrCat(
        "possibly cache-dominated: ", job, "buffered reads over ", common::FormatBytes(span),
        ", under 2 x RAM (", common::FormatBytes(2 * host_.ram_bytes),
        "): data read or written once may be read again from the page cache (use direct: "
        "true)"));
  }
  if (writes && m.spec.fsync() == 0 && m.spec.fdatasync() == 0) {
    warnings->push_back(common::StrCat(
        "possibly cache-dominated: ", job,
        "buffered writes without fsync or fdatasync may still be in the page cache when the "
        "clock stops (use direct: true, or fdatasync: N)"));
  }
}

JobPlan RandioWorkload::PlanFor(const Member& m, uint32_t job) const {
  const RandioSpec& spec = m.spec;
  JobPlan plan;
  // The thread's number in the phase: a single job's threads keep the seeds they always had.
  const uint32_t thread = m.first_job + job;
  plan.job = thread;
  plan.iodepth = m.iodepth;
  plan.offsets.rw = spec.rw();
  plan.offsets.rwmixread = spec.has_rwmixread() ? spec.rwmixread() : 50;
  plan.offsets.base = m.offset + uint64_t{job} * m.offset_increment;
  plan.offsets.size = m.region_size;
  plan.offsets.bs_min = m.bs_min;
  plan.offsets.bs_max = m.bs_max;
  plan.offsets.zipf = spec.random_distribution() == RandioSpec::ZIPF;
  plan.offsets.zipf_theta = spec.zipf_theta();
  plan.offsets.time_based = spec.time_based();
  uint64_t seed = seed_ + thread;
  plan.offsets.seed = common::SplitMix64(&seed);
  plan.data_seed = common::SplitMix64(&seed);
  plan.flush_every = spec.fsync() != 0 ? spec.fsync() : spec.fdatasync();
  plan.flush_data_only = spec.fsync() == 0;
  plan.rate_iops = spec.rate_iops();
  plan.rate_bytes = spec.rate_bytes();
  plan.rate_poisson = spec.rate_poisson();
  plan.offsets.read_split = SplitOf(spec.bssplit());
  plan.offsets.write_split = SplitOf(spec.write_bssplit());
  plan.offsets.align = spec.blockalign();
  plan.offsets.norandommap = spec.norandommap();
  plan.batch_submit = spec.iodepth_batch_submit();
  plan.batch_complete_min = spec.iodepth_batch_complete_min();
  plan.batch_complete_max = spec.iodepth_batch_complete_max();
  if (spec.engine() == RandioSpec::IO_URING || spec.engine() == RandioSpec::LIBAIO) {
    // fio's defaults: one request per call, and at most iodepth_batch_complete_min
    // completions per reap, so that each freed slot goes back to the device at once. Taking
    // every completion and submitting every free slot in one call costs fewer system calls,
    // but the block layer holds the whole batch until the call ends: on a device that
    // completes in bursts (virtio) the queue then runs dry between batches (75,000 reads/s
    // against 88,000-91,000 at QD32, docs/performance.md), and sequential requests merge
    // where fio's do not.
    if (plan.batch_submit == 0) plan.batch_submit = 1;
    if (plan.batch_complete_max == 0) {
      plan.batch_complete_max = std::max<uint32_t>(1, plan.batch_complete_min);
    }
  }
  plan.iodepth_low = spec.iodepth_low();
  plan.think_nanos = spec.thinktime_nanos();
  plan.think_spin_nanos = spec.thinktime_spin_nanos();
  plan.think_blocks = spec.thinktime_blocks();
  plan.end_fsync = spec.end_fsync() && common::RandioJobWrites(spec);
  return plan;
}

WrittenPrefix RandioWorkload::WrittenFromStart() const { return laid_out_; }

Status RandioWorkload::Run(RunContext& ctx) {
  // startdelay, then ramp_time, are unmeasured: the timed region restarts after both. The jobs
  // of a run group share them (CheckRandioSpec); each has its own runtime.
  const int64_t lead = spec_.startdelay_nanos() + spec_.ramp_time_nanos();
  std::atomic<bool> measuring{lead == 0};
  series_interval_nanos_ = ctx.recorders.interval_nanos();
  std::vector<JobShared> shared;  // Filled at the start; the jobs read it after `created`.

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
          statuses[j] =
              CatchAtThreadTop("randio job", [&] { return jobs_[j]->Run(shared[member_of_[j]]); });
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
  // The threads are ready before the instant: what is left at the instant is one wake-up.
  const bool begun = start_error.ok() && (ctx.start == nullptr || ctx.start->AwaitStart());
  if (!begun) {
    start_failed = true;
    created.count_down();
    for (std::thread& t : threads) t.join();
    ctx.region.Close();
    return start_error.ok() ? absl::CancelledError("randio: aborted before it began") : start_error;
  }
  const int64_t start = ctx.clock.MonotonicNanos();
  const int64_t job_start = spec_.startdelay_nanos() == 0 ? 0 : start + spec_.startdelay_nanos();
  shared.reserve(members_.size());
  for (const Member& m : members_) {
    const int64_t deadline =
        m.spec.runtime_nanos() == 0 ? 0 : start + lead + m.spec.runtime_nanos();
    shared.push_back(JobShared{ctx.clock, ctx.cancelled, measuring, ctx.recorders, m.book.get(),
                               deadline, job_start,
                               /*start_measured=*/spec_.ramp_time_nanos() == 0});
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

  // In a run group, a verification failure names its job.
  auto job_of = [&](const Member& m) {
    return members_.size() > 1 ? common::StrCat("job '", m.spec.name(), "': ") : std::string();
  };
  Status status;
  for (size_t j = 0; j < statuses.size(); ++j) {
    const Status& s = statuses[j];
    if (s.ok() || !(status.ok() || absl::IsCancelled(status))) continue;
    status = absl::IsDataLoss(s)
                 ? absl::DataLossError(common::StrCat(job_of(members_[member_of_[j]]), s.message()))
                 : s;
  }
  for (const Member& m : members_) {
    if (m.book == nullptr || !(status.ok() || absl::IsDataLoss(status)) || ctx.cancelled.load()) {
      continue;
    }
    const Status read_back = ReadBack(*m.book, ctx.cancelled);
    if (!read_back.ok() && status.ok()) status = read_back;
    const auto report = m.book->Report();
    if (status.ok() && report.mismatches() > 0) {
      const auto& first = report.first_mismatches(0);
      status = absl::DataLossError(
          common::StrCat(job_of(m), "verify: ", report.mismatches(), " of ", report.units_checked(),
                         " units differ from what was written; first at offset ", first.offset(),
                         ": ", first.kind(), " (", first.field(), ": expected ", first.expected(),
                         ", found ", first.actual(), ")"));
    }
  }
  return status;
}

CleanupReport RandioWorkload::Cleanup() {
  jobs_.clear();
  member_of_.clear();
  owned_device_.reset();
  return dir_ ? dir_->Cleanup() : CleanupReport();
}

}  // namespace stormark::agent
