// The timed region of a Run: what a phase's elapsed time, CPU time, start instant and
// per-second series count. The phase runner opens it as Run starts and closes it when Run
// returns. A workload with a warm-up opens it anew when the warm-up ends (randio's ramp_time),
// and one with an untimed epilogue closes it early (randio's read-back verification).
//
// Thread-safe.
#ifndef STORMARK_AGENT_WORKLOADS_TIMED_REGION_H_
#define STORMARK_AGENT_WORKLOADS_TIMED_REGION_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/clock.h"
#include "common/cpu_times.h"
#include "common/recorder.h"

namespace stormark::agent {

class TimedRegion {
 public:
  // Opens the region now. `clock` and `recorders` must outlive it.
  TimedRegion(const common::Clock& clock, common::RecorderSet& recorders);

  // Starts the region again, now: what came before is not measured. Only before any
  // recorder has been added to the set (returns false, and does nothing, after that).
  bool Restart();
  // Ends the region now. Later calls do nothing.
  void Close();

  struct Span {
    int64_t start_mono = 0;
    int64_t end_mono = 0;  // Now, while the region is open.
    int64_t start_unix = 0;
    common::CpuTimes cpu_start;
    common::CpuTimes cpu_end;  // Now, while the region is open.
  };
  Span span() const;
  // Monotonic start, cheap; for progress reports.
  int64_t start_mono() const;

 private:
  const common::Clock& clock_;
  common::RecorderSet& recorders_;
  mutable absl::Mutex mu_;
  Span span_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_TIMED_REGION_H_
