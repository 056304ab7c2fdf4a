// What a simulated randio phase does and reports, worked out once from its spec and shared by
// every agent that prepared it: how long it runs, how often it sends progress, and its final
// result but for the times, which each agent fills in as its own.
//
// Nothing is read or written: the figures are what the spec asks for. Operations are the rate
// times the runtime (rate_iops, else rate_bytes / bs, per job, times numjobs; 10,000 IOPS a job
// when the spec sets no rate), split into reads and writes by rw and rwmixread, each with a
// latency of 1 to 3 us in the histogram format a real agent sends (common/histogram.h), and a
// series per series_interval_ms. A phase lasts ramp_time + startdelay + runtime (1 s when
// runtime is 0), all of it reported as the timed region.
#ifndef STORMARK_BENCH_FLEET_SIM_PHASE_SHAPE_H_
#define STORMARK_BENCH_FLEET_SIM_PHASE_SHAPE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::fleet_sim {

struct PhaseShape {
  std::string phase_id;
  // From the start instant to the final result.
  int64_t duration_nanos = 0;
  int64_t progress_interval_nanos = 0;
  uint64_t ops = 0;
  uint64_t bytes = 0;
  // The final result with its times unset: state, totals, measurements, resolved, environment.
  stormark::v1::PhaseResult result;
};

// The shape of `spec`, or why the simulator cannot play it (a workload other than randio, a
// target other than the null one).
common::StatusOr<std::shared_ptr<const PhaseShape>> ShapeOf(const stormark::v1::PhaseSpec& spec);

// The final result of `shape` on one agent: times on that agent's clock, `elapsed_nanos` from
// the monotonic clock.
stormark::v1::PhaseResult ResultOf(const PhaseShape& shape, int64_t start_unix_nanos,
                                   int64_t end_unix_nanos, int64_t elapsed_nanos,
                                   int64_t start_late_nanos);

// Progress `elapsed_nanos` into the phase: the totals in proportion.
stormark::v1::RunUpdate::Progress ProgressAt(const PhaseShape& shape, int64_t elapsed_nanos);

// ShapeOf, once per distinct spec: every agent of a phase gets the same one. Thread-safe.
class PhaseShapes {
 public:
  // `series_interval_ms` stands in for a spec's own when it sets none (0: a second).
  explicit PhaseShapes(uint32_t series_interval_ms = 0) : series_interval_ms_(series_interval_ms) {}

  common::StatusOr<std::shared_ptr<const PhaseShape>> For(const stormark::v1::PhaseSpec& spec)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const uint32_t series_interval_ms_;
  absl::Mutex mu_;
  // By the spec's serialized bytes (phase id included). A run has few phases: never trimmed.
  std::map<std::string, std::shared_ptr<const PhaseShape>> shapes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stormark::fleet_sim

#endif  // STORMARK_BENCH_FLEET_SIM_PHASE_SHAPE_H_
