#include "agent/workloads/trim/trim.h"

#include <cstring>
#include <optional>
#include <utility>

#include "agent/devices/io_buffer.h"
#include "common/random.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/trim/trim_spec.h"

namespace stormark::agent {

using common::Status;
using stormark::v1::TrimSpec;

namespace {

constexpr uint64_t kDefaultSeed = 0x7217a5eedULL;

}  // namespace

TrimWorkload::TrimWorkload(const TrimSpec& spec, TargetConfig target,
                           std::shared_ptr<BlockTarget> block)
    : spec_(spec), target_(std::move(target)), block_(std::move(block)) {}

TrimWorkload::TrimWorkload(const TrimSpec& spec, Device& device) : spec_(spec), device_(&device) {}

TrimWorkload::~TrimWorkload() = default;

std::vector<uint64_t> TrimWorkload::RequestOffsets(const TrimSpec& spec, uint64_t region_bytes) {
  const uint64_t bs = spec.bs() == 0 ? common::kTrimDefaultBs : spec.bs();
  std::vector<uint64_t> offsets;
  offsets.reserve(region_bytes / bs + 1);
  for (uint64_t at = 0; at < region_bytes; at += bs) offsets.push_back(spec.offset_bytes() + at);
  if (spec.random()) {
    // Fisher-Yates: each block once, in an order the seed decides.
    common::Xoshiro256 rng(spec.seed() == 0 ? kDefaultSeed : spec.seed());
    for (size_t i = offsets.size(); i > 1; --i) std::swap(offsets[i - 1], offsets[rng.Below(i)]);
  }
  return offsets;
}

Status TrimWorkload::Prepare(const std::atomic<bool>& cancelled,
                             std::vector<std::string>* warnings) {
  RETURN_IF_ERROR(common::CheckTrimSpec(spec_));
  if (device_ == nullptr) {
    if (block_ == nullptr) {
      ASSIGN_OR_RETURN(block_, BlockTarget::Resolve(target_));
    }
    BlockOpenOptions options;
    options.write = true;  // The interlocks of a write: a discard destroys data as one does.
    ASSIGN_OR_RETURN(owned_device_, OpenTargetDevice(*block_, options, cancelled, warnings));
    device_ = owned_device_.get();
  }
  const std::string where = target_.name.empty() ? device_->Describe()
                                                 : common::StrCat("target '", target_.name, "' (",
                                                                  device_->Describe(), ")");
  if (!device_->caps().discard) {
    return absl::FailedPreconditionError(
        common::StrCat("trim: ", where,
                       " cannot discard (the agent discards on block devices and on "
                       "regular files only)"));
  }
  bs_ = spec_.bs() == 0 ? common::kTrimDefaultBs : spec_.bs();
  const uint64_t size = device_->size();
  if (spec_.offset_bytes() >= size) {
    return absl::OutOfRangeError(
        common::StrCat("trim: offset ", common::FormatBytes(spec_.offset_bytes()),
                       " is past the end of ", where, ", which holds ", common::FormatBytes(size)));
  }
  region_bytes_ = spec_.size_bytes() == 0 ? size - spec_.offset_bytes() : spec_.size_bytes();
  if (region_bytes_ > size - spec_.offset_bytes()) {
    return absl::OutOfRangeError(
        common::StrCat("trim: size ", common::FormatBytes(region_bytes_), " from offset ",
                       common::FormatBytes(spec_.offset_bytes()), " does not fit ", where,
                       ", which holds ", common::FormatBytes(size)));
  }
  // Address order needs no list: a 1 TiB region in 4k requests would be 2 GiB of offsets that
  // the memory estimate does not count (it counts the list of a random order only).
  if (spec_.random()) offsets_ = RequestOffsets(spec_, region_bytes_);
  return absl::OkStatus();
}

Status TrimWorkload::Run(RunContext& ctx) {
  common::Recorder* recorder = ctx.recorders.Add();
  trims_ = recorder;
  series_interval_nanos_ = ctx.recorders.interval_nanos();
  common::Recorder* writes = nullptr;
  std::optional<IoBuffer> buffer;
  common::Xoshiro256 random(spec_.seed() == 0 ? kDefaultSeed : spec_.seed());
  if (spec_.then_write()) {
    writes = ctx.recorders.Add();
    writes_ = writes;
    ASSIGN_OR_RETURN(IoBuffer allocated, IoBuffer::Allocate(bs_));
    buffer.emplace(std::move(allocated));
    random.Fill(buffer->data(), bs_);
  }
  const uint64_t end = spec_.offset_bytes() + region_bytes_;
  const uint64_t requests = (region_bytes_ + bs_ - 1) / bs_;
  for (uint64_t i = 0; i < requests; ++i) {
    const uint64_t offset = spec_.random() ? offsets_[i] : spec_.offset_bytes() + i * bs_;
    if (ctx.cancelled.load(std::memory_order_relaxed)) return absl::CancelledError("trim: aborted");
    const uint64_t length = std::min(bs_, end - offset);
    const int64_t start = ctx.clock.MonotonicNanos();
    touched_.store(true, std::memory_order_relaxed);  // A failed discard may have done part.
    const int64_t result = device_->Discard(offset, length);
    const int64_t done = ctx.clock.MonotonicNanos();
    if (result < 0) {
      return absl::InternalError(common::StrCat("trim: discard of ", length, " bytes at offset ",
                                                offset, " on ", device_->Describe(), ": ",
                                                std::strerror(static_cast<int>(-result))));
    }
    recorder->Record(done, static_cast<uint64_t>(done - start), length);
    discarded_.fetch_add(length, std::memory_order_relaxed);
    if (writes == nullptr) continue;
    // Each written 4 KiB carries its offset and a counter, so that no two blocks are alike.
    for (uint64_t at = 0; at + 16 <= length; at += 4096) {
      const uint64_t stamp[2] = {offset + at, i};
      std::memcpy(buffer->data() + at, stamp, sizeof(stamp));
    }
    const int64_t write_start = ctx.clock.MonotonicNanos();
    RETURN_IF_ERROR(device_->WriteAt(offset, length, buffer->data()));
    const int64_t written = ctx.clock.MonotonicNanos();
    writes->Record(written, static_cast<uint64_t>(written - write_start), length);
  }
  // The writes reach the device inside the timed region, as fio's direct writes would.
  if (writes != nullptr) RETURN_IF_ERROR(device_->Flush(/*data_only=*/true));
  return absl::OkStatus();
}

void TrimWorkload::AddToResult(stormark::v1::PhaseResult* result) const {
  if (writes_ != nullptr) {
    for (auto [name, recorder] : {std::pair{"trim", trims_}, std::pair{"write", writes_}}) {
      if (recorder == nullptr || recorder->ops() == 0) continue;
      stormark::v1::Measurement* m = result->add_measurements();
      m->set_name(name);
      m->set_bytes(recorder->bytes());
      m->set_ops(recorder->ops());
      m->set_elapsed_nanos(result->elapsed_nanos());
      recorder->latency().ToProto(m->mutable_latency());
      // Merged from 0: the series counts from the start of the timed region.
      common::Recorder copy(0, series_interval_nanos_);
      copy.Merge(*recorder);
      copy.SeriesToProto(result->elapsed_nanos(), m->mutable_series());
    }
  }
  (*result->mutable_resolved())["bs"] = common::FormatSizeShort(bs_);
  (*result->mutable_resolved())["size"] = common::FormatSizeShort(region_bytes_);
  (*result->mutable_resolved())["order"] = spec_.random() ? "random" : "sequential";
  if (spec_.then_write()) (*result->mutable_resolved())["then_write"] = "true";
}

WrittenPrefix TrimWorkload::WrittenFromStart() const {
  WrittenPrefix written;
  written.discarded = touched_.load(std::memory_order_relaxed);
  written.how = "trim";
  return written;
}

}  // namespace stormark::agent
