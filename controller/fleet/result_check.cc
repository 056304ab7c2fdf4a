#include "controller/fleet/result_check.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StrCat;

constexpr int64_t kNanosPerSecond = 1'000'000'000;
// What the agent's monotonic clock may run past the controller's over a phase: a second for
// the stream's set-up on either side, and 1% of the phase for the two clocks' rates.
constexpr int64_t kSlackNanos = kNanosPerSecond;
constexpr int64_t kRateSlackDivisor = 100;
// A results file's run times are on the controller's wall clock, which a step (NTP, a resumed
// virtual machine) may have moved during the run: a result read back has an hour more.
constexpr int64_t kStoredSlackNanos = int64_t{3600} * kNanosPerSecond;
// The most CPUs Linux runs on (NR_CPUS at its largest): the agent's CPU time over a phase is at
// most that many times the phase.
constexpr double kMostCpus = 8192;

// The first implausible figure of a result, named by its path in the result.
class Checker {
 public:
  // For a phase that can have lasted at most `observed_nanos`, which is `observed_is` ("the
  // controller saw the phase's stream open"), with `extra_slack_nanos` on top of the usual slack.
  Checker(int64_t observed_nanos, std::string_view observed_is, int64_t extra_slack_nanos = 0)
      : observed_nanos_(observed_nanos < 0 ? 0 : observed_nanos),
        longest_nanos_(observed_nanos_ + kSlackNanos + observed_nanos_ / kRateSlackDivisor +
                       extra_slack_nanos),
        most_bytes_(kFastestPlausibleBytesPerSecond * Nanos() / 1e9),
        most_ops_(kFastestPlausibleOpsPerSecond * Nanos() / 1e9),
        observed_is_(observed_is) {}

  // A length or an offset within the phase: 0 to the longest the phase can have lasted.
  void Span(std::string_view prefix, std::string_view field, int64_t nanos) {
    if (InPhase(nanos)) return;
    Fail(prefix, field, nanos,
         nanos < 0
             ? std::string("negative")
             : fmt::format("longer than the {:.3f} s {}", Seconds(observed_nanos_), observed_is_));
  }

  // An instant on the agent's clock: 0 (none) or one between 1970 and 2116.
  void Instant(std::string_view prefix, std::string_view field, int64_t unix_nanos) {
    if (unix_nanos >= 0 && unix_nanos <= kLatestPlausibleUnixNanos) return;
    Fail(prefix, field, unix_nanos, "not an instant between 1970 and 2116");
  }

  // The difference of two instants on the agent's clock (how late the phase began, which a step
  // of that clock moves by as much): at most as far apart as two instants can be.
  void Between(std::string_view prefix, std::string_view field, int64_t nanos) {
    if (nanos >= -kLatestPlausibleUnixNanos && nanos <= kLatestPlausibleUnixNanos) return;
    Fail(prefix, field, nanos, "further than 2116 is from 1970");
  }

  // CPU time over the phase: at most every CPU Linux can have, all through it.
  void Cpu(std::string_view prefix, std::string_view field, int64_t nanos) {
    if (nanos >= 0 && static_cast<double>(nanos) <= kMostCpus * Nanos()) return;
    Fail(prefix, field, nanos,
         nanos < 0 ? std::string("negative")
                   : fmt::format("more than {:.0f} CPUs for the whole phase", kMostCpus));
  }

  // Bytes and operations done within the phase, at most the fastest plausible rates.
  void Amounts(std::string_view prefix, std::string_view bytes_field, uint64_t bytes,
               std::string_view ops_field, uint64_t ops) {
    if (!BytesInPhase(bytes)) Fail(prefix, bytes_field, bytes, "past 1 EiB/s over the phase");
    if (!OpsInPhase(ops)) {
      Fail(prefix, ops_field, ops, "past 2^40 operations a second over the phase");
    }
  }

  void Series(std::string_view prefix,
              const google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>& series) {
    for (int i = 0; i < series.size() && first_.empty(); ++i) {
      const stormark::v1::IntervalSample& s = series[i];
      // A long phase's series has hundreds of thousands of samples a fleet: a sample is named
      // only when it fails.
      if (InPhase(s.offset_nanos()) && InPhase(s.length_nanos()) && BytesInPhase(s.bytes()) &&
          OpsInPhase(s.ops())) {
        continue;
      }
      const std::string at = StrCat(prefix, "series[", i, "].");
      Span(at, "offset_nanos", s.offset_nanos());
      Span(at, "length_nanos", s.length_nanos());
      Amounts(at, "bytes", s.bytes(), "ops", s.ops());
    }
  }

  void Measurement(std::string_view prefix, const stormark::v1::Measurement& m) {
    Span(prefix, "elapsed_nanos", m.elapsed_nanos());
    Cpu(prefix, "cpu_user_nanos", m.cpu_user_nanos());
    Cpu(prefix, "cpu_system_nanos", m.cpu_system_nanos());
    Amounts(prefix, "bytes", m.bytes(), "ops", m.ops());
    Series(prefix, m.series());
  }

  void Measurements(std::string_view prefix,
                    const google::protobuf::RepeatedPtrField<stormark::v1::Measurement>& all) {
    for (int i = 0; i < all.size() && first_.empty(); ++i) {
      Measurement(StrCat(prefix, "measurements[", i, "]."), all[i]);
    }
  }

  Status status() const {
    if (first_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(first_);
  }

 private:
  static double Seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }
  double Nanos() const { return static_cast<double>(longest_nanos_); }
  bool InPhase(int64_t nanos) const { return nanos >= 0 && nanos <= longest_nanos_; }
  bool BytesInPhase(uint64_t bytes) const { return static_cast<double>(bytes) <= most_bytes_; }
  bool OpsInPhase(uint64_t ops) const { return static_cast<double>(ops) <= most_ops_; }

  template <typename Value>
  void Fail(std::string_view prefix, std::string_view field, Value value, std::string_view why) {
    if (!first_.empty()) return;
    first_ = StrCat(prefix, field, " is ", value, ": ", why);
  }

  const int64_t observed_nanos_;
  const int64_t longest_nanos_;
  // The most bytes and operations the phase can have done at the fastest plausible rates.
  const double most_bytes_;
  const double most_ops_;
  const std::string_view observed_is_;
  std::string first_;
};

constexpr std::string_view kStreamOpen = "the controller saw the phase's stream open";

Status Check(const stormark::v1::PhaseResult& result, Checker& check) {
  check.Span("", "elapsed_nanos", result.elapsed_nanos());
  check.Instant("", "start_unix_nanos", result.start_unix_nanos());
  check.Instant("", "end_unix_nanos", result.end_unix_nanos());
  check.Between("", "start_late_nanos", result.start_late_nanos());
  check.Cpu("", "cpu_user_nanos", result.cpu_user_nanos());
  check.Cpu("", "cpu_system_nanos", result.cpu_system_nanos());
  check.Amounts("", "bytes", result.bytes(), "ops", result.ops());
  check.Span("", "first_done_nanos", result.first_done_nanos());
  check.Span("", "last_done_nanos", result.last_done_nanos());
  check.Amounts("", "first_done_bytes", result.first_done_bytes(), "first_done_ops",
                result.first_done_ops());
  check.Series("", result.series());
  check.Measurements("", result.measurements());
  for (int i = 0; i < result.jobs_size(); ++i) {
    check.Measurements(StrCat("jobs[", i, "]."), result.jobs(i).measurements());
  }
  for (int i = 0; i < result.threads_size(); ++i) {
    check.Measurements(StrCat("threads[", i, "]."), result.threads(i).measurements());
  }
  return check.status();
}

}  // namespace

Status CheckClockReading(int64_t agent_receive_unix_nanos, int64_t agent_send_unix_nanos) {
  Checker check(0, kStreamOpen);
  check.Instant("", "agent_receive_unix_nanos", agent_receive_unix_nanos);
  check.Instant("", "agent_send_unix_nanos", agent_send_unix_nanos);
  return check.status();
}

Status CheckResult(const stormark::v1::PhaseResult& result, int64_t observed_nanos) {
  Checker check(observed_nanos, kStreamOpen);
  return Check(result, check);
}

Status CheckStoredResult(const stormark::v1::PhaseResult& result, int64_t run_nanos,
                         std::string_view run_is) {
  // A run's length on a wall clock can be anything: what fits in an int64 with the slack.
  const int64_t longest = kLatestPlausibleUnixNanos / 2;
  Checker check(std::min(run_nanos, longest), run_is, kStoredSlackNanos);
  return Check(result, check);
}

Status CheckProgress(const stormark::v1::RunUpdate::Progress& progress, int64_t observed_nanos) {
  Checker check(observed_nanos, kStreamOpen);
  check.Span("", "elapsed_nanos", progress.elapsed_nanos());
  check.Amounts("", "bytes", progress.bytes(), "ops", progress.ops());
  return check.status();
}

}  // namespace stormark::controller
