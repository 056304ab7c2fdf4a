#include "bench/fleet_sim/phase_shape.h"

#include <algorithm>

#include "bench/fleet_sim/sim_fleet.h"
#include "bench/fleet_sim/sim_host.h"
#include "common/histogram.h"
#include "common/strings.h"

namespace stormark::fleet_sim {
namespace {

using stormark::v1::RandioSpec;

constexpr int64_t kNanosPerSecond = 1'000'000'000;
constexpr uint64_t kUnlimitedIopsPerJob = 10'000;
// Values recorded in a histogram at most; a longer phase's counts are scaled, not recorded.
constexpr uint64_t kMaxRecorded = 100'000;

// Latencies of 1 to 3 us, as a rate-limited null device shows, spread over a few buckets.
stormark::v1::Histogram LatencyOf(uint64_t ops) {
  common::LatencyHistogram histogram;
  const uint64_t recorded = std::min(ops, kMaxRecorded);
  for (uint64_t k = 0; k < recorded; ++k) histogram.Record(1000 + (k * 7919) % 2000);
  stormark::v1::Histogram out;
  histogram.ToProto(&out);
  return out;
}

// Operations spread evenly over the intervals of `duration`.
void AddSeries(uint64_t ops, uint64_t bytes, int64_t duration, int64_t interval,
               google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>* out) {
  for (int64_t at = 0; at < duration; at += interval) {
    const int64_t length = std::min(interval, duration - at);
    const double share = static_cast<double>(length) / static_cast<double>(duration);
    stormark::v1::IntervalSample* s = out->Add();
    s->set_offset_nanos(at);
    s->set_length_nanos(length);
    s->set_ops(static_cast<uint64_t>(static_cast<double>(ops) * share));
    s->set_bytes(static_cast<uint64_t>(static_cast<double>(bytes) * share));
    s->set_latency_sum_nanos(s->ops() * 2000);
  }
}

void AddMeasurement(const char* name, uint64_t ops, uint64_t bs, int64_t duration, int64_t interval,
                    stormark::v1::PhaseResult* result) {
  if (ops == 0) return;
  stormark::v1::Measurement* m = result->add_measurements();
  m->set_name(name);
  m->set_ops(ops);
  m->set_bytes(ops * bs);
  m->set_elapsed_nanos(duration);
  *m->mutable_latency() = LatencyOf(ops);
  AddSeries(ops, ops * bs, duration, interval, m->mutable_series());
}

// The share of operations that read, in percent.
uint32_t ReadPercent(const RandioSpec& spec) {
  switch (spec.rw()) {
    case RandioSpec::WRITE:
    case RandioSpec::RANDWRITE:
      return 0;
    case RandioSpec::RANDRW:
    case RandioSpec::READWRITE:
      return spec.has_rwmixread() ? std::min(spec.rwmixread(), 100u) : 50;
    default:
      return 100;
  }
}

}  // namespace

common::StatusOr<std::shared_ptr<const PhaseShape>> ShapeOf(const stormark::v1::PhaseSpec& spec) {
  if (!spec.has_randio()) {
    return absl::InvalidArgumentError("the fleet simulator runs randio phases only");
  }
  if (spec.target() != kTargetName) {
    return absl::NotFoundError(
        common::StrCat("no target '", spec.target(), "' (the agent has: ", kTargetName, ")"));
  }
  const RandioSpec& r = spec.randio();
  auto shape = std::make_shared<PhaseShape>();
  shape->phase_id = spec.phase_id();
  const int64_t runtime = r.runtime_nanos() > 0 ? r.runtime_nanos() : kNanosPerSecond;
  shape->duration_nanos = runtime + std::max<int64_t>(r.ramp_time_nanos(), 0) +
                          std::max<int64_t>(r.startdelay_nanos(), 0);
  shape->progress_interval_nanos =
      int64_t{spec.progress_interval_ms() > 0 ? spec.progress_interval_ms() : 1000} * 1'000'000;
  const int64_t series_interval =
      int64_t{spec.series_interval_ms() > 0 ? spec.series_interval_ms() : 1000} * 1'000'000;

  const uint64_t bs = r.bs_min() > 0 ? r.bs_min() : 4096;
  const uint64_t jobs = r.numjobs() > 0 ? r.numjobs() : 1;
  const uint64_t iops_per_job = r.rate_iops() > 0    ? r.rate_iops()
                                : r.rate_bytes() > 0 ? std::max<uint64_t>(r.rate_bytes() / bs, 1)
                                                     : kUnlimitedIopsPerJob;
  const double seconds = static_cast<double>(shape->duration_nanos) / kNanosPerSecond;
  shape->ops = static_cast<uint64_t>(static_cast<double>(iops_per_job * jobs) * seconds);
  shape->bytes = shape->ops * bs;
  const uint64_t reads = shape->ops * ReadPercent(r) / 100;

  stormark::v1::PhaseResult& result = shape->result;
  result.set_state(stormark::v1::PhaseResult::SUCCEEDED);
  result.set_ops(shape->ops);
  result.set_bytes(shape->bytes);
  *result.mutable_latency() = LatencyOf(shape->ops);
  AddSeries(shape->ops, shape->bytes, shape->duration_nanos, series_interval,
            result.mutable_series());
  AddMeasurement("read", reads, bs, shape->duration_nanos, series_interval, &result);
  AddMeasurement("write", shape->ops - reads, bs, shape->duration_nanos, series_interval, &result);
  auto& resolved = *result.mutable_resolved();
  resolved["rw"] = common::ToLower(RandioSpec::Pattern_Name(r.rw()));
  resolved["bs"] = common::StrCat(bs);
  resolved["iodepth"] = common::StrCat(r.iodepth() > 0 ? r.iodepth() : 1);
  resolved["numjobs"] = common::StrCat(jobs);
  resolved["engine"] = "null";
  resolved["direct"] = r.direct() ? "true" : "false";
  resolved["seed"] = common::StrCat(r.seed() > 0 ? r.seed() : 1);
  FillHostEnvironment(result.mutable_host_environment());
  return std::shared_ptr<const PhaseShape>(std::move(shape));
}

stormark::v1::PhaseResult ResultOf(const PhaseShape& shape, int64_t start_unix_nanos,
                                   int64_t end_unix_nanos, int64_t elapsed_nanos,
                                   int64_t start_late_nanos) {
  stormark::v1::PhaseResult result = shape.result;
  result.set_start_unix_nanos(start_unix_nanos);
  result.set_end_unix_nanos(end_unix_nanos);
  result.set_elapsed_nanos(elapsed_nanos);
  result.set_start_late_nanos(start_late_nanos);
  return result;
}

stormark::v1::RunUpdate::Progress ProgressAt(const PhaseShape& shape, int64_t elapsed_nanos) {
  const double share = std::clamp(
      static_cast<double>(elapsed_nanos) / static_cast<double>(shape.duration_nanos), 0.0, 1.0);
  stormark::v1::RunUpdate::Progress p;
  p.set_elapsed_nanos(elapsed_nanos);
  p.set_ops(static_cast<uint64_t>(static_cast<double>(shape.ops) * share));
  p.set_bytes(static_cast<uint64_t>(static_cast<double>(shape.bytes) * share));
  return p;
}

common::StatusOr<std::shared_ptr<const PhaseShape>> PhaseShapes::For(
    const stormark::v1::PhaseSpec& spec) {
  std::string key = spec.SerializeAsString();
  absl::MutexLock lock(&mu_);
  if (auto it = shapes_.find(key); it != shapes_.end()) return it->second;
  std::shared_ptr<const PhaseShape> shape;
  if (spec.series_interval_ms() == 0 && series_interval_ms_ > 0) {
    stormark::v1::PhaseSpec finer = spec;
    finer.set_series_interval_ms(series_interval_ms_);
    ASSIGN_OR_RETURN(shape, ShapeOf(finer));
  } else {
    ASSIGN_OR_RETURN(shape, ShapeOf(spec));
  }
  shapes_.emplace(std::move(key), shape);
  return shape;
}

}  // namespace stormark::fleet_sim
