#include "controller/fleet/phase_deadline.h"

#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

constexpr int64_t kGraceNanos = 60'000'000'000;
constexpr int kRuntimeFactor = 2;
constexpr int kSizeFactor = 4;
constexpr int64_t kPrepareBaseNanos = int64_t{300} * 1'000'000'000;
// The slowest lay-out rate the default prepare deadline allows for: a busy disk or network.
constexpr uint64_t kPrepareBytesPerSecond = uint64_t{16} << 20;

double Seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

}  // namespace

PrepareDeadline::PrepareDeadline(const stormark::v1::PhaseSpec& spec, int64_t plan_deadline_nanos) {
  if (plan_deadline_nanos > 0) {
    limit_nanos = plan_deadline_nanos;
    why = "its prepare_deadline";
    return;
  }
  // What the set-up may write: the one file a stream or randio phase works on.
  const WorkloadKind* kind = KindOf(spec);
  const uint64_t bytes =
      kind == nullptr || kind->prepare_bytes == nullptr ? 0 : kind->prepare_bytes(spec);
  limit_nanos =
      kPrepareBaseNanos + static_cast<int64_t>(bytes / kPrepareBytesPerSecond) * 1'000'000'000;
  why = "the default: 5 min + 1 s per 16 MiB of the phase's size";
}

PhaseDeadline::PhaseDeadline(const stormark::v1::PhaseSpec& spec, int64_t plan_deadline_nanos,
                             uint64_t expected_bytes) {
  if (plan_deadline_nanos > 0) {
    fixed_limit_nanos_ = plan_deadline_nanos;
    fixed_why_ = fmt::format("past its deadline of {:.1f} s (plan `deadline:`)",
                             Seconds(plan_deadline_nanos));
    return;
  }
  const WorkloadKind* kind = KindOf(spec);
  const int64_t expected =
      kind == nullptr || kind->runtime_nanos == nullptr ? 0 : kind->runtime_nanos(spec);
  if (expected > 0) {
    fixed_limit_nanos_ = kRuntimeFactor * expected + kGraceNanos;
    fixed_why_ = fmt::format(
        "far past its expected end at {:.1f} s (its runtime); the limit is "
        "{} x that + 60 s",
        Seconds(expected), kRuntimeFactor);
    return;
  }
  expected_bytes_ = expected_bytes;
}

void PhaseDeadline::Progress(int64_t elapsed_nanos, uint64_t bytes) {
  if (bytes > advanced_bytes_) {
    advanced_bytes_ = bytes;
    advanced_at_nanos_ = elapsed_nanos;
  }
}

std::optional<int64_t> PhaseDeadline::LimitNanos() const {
  if (fixed_limit_nanos_ > 0) return fixed_limit_nanos_;
  const std::optional<double> limit = SizeLimitNanos();
  if (!limit) return std::nullopt;
  // A huge size with a slow start can estimate past what int64 holds (2^63 ns).
  if (*limit >= 0x1p63) return INT64_MAX;
  return static_cast<int64_t>(*limit);
}

std::optional<double> PhaseDeadline::SizeLimitNanos() const {
  if (expected_bytes_ == 0 || advanced_bytes_ == 0 || advanced_at_nanos_ <= 0) return std::nullopt;
  return kSizeFactor * ExpectedNanos() + static_cast<double>(kGraceNanos);
}

double PhaseDeadline::ExpectedNanos() const {
  // The whole size at the average rate seen up to the last progress that moved bytes.
  return static_cast<double>(advanced_at_nanos_) * static_cast<double>(expected_bytes_) /
         static_cast<double>(advanced_bytes_);
}

std::string PhaseDeadline::Overdue(int64_t elapsed_nanos) const {
  if (fixed_limit_nanos_ > 0) {
    if (elapsed_nanos <= fixed_limit_nanos_) return "";
    return fmt::format("ran {:.1f} s, {}", Seconds(elapsed_nanos), fixed_why_);
  }
  const std::optional<double> limit = SizeLimitNanos();
  if (!limit || static_cast<double>(elapsed_nanos) <= *limit) return "";
  return fmt::format(
      "ran {:.1f} s, far past its expected end at {:.1f} s (its rate so far); the limit is {} x "
      "that + 60 s",
      Seconds(elapsed_nanos), ExpectedNanos() / 1e9, kSizeFactor);
}

}  // namespace stormark::controller
