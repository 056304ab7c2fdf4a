// A run's results trimmed in memory once the results database holds them, and read back in
// full one phase at a time for the outputs that need every detail.
//
// A host's result grows with the phase's length (a sample a second, per measurement, job and
// thread) and carries its environment facts and a histogram per measurement: some 13 KB per
// host and phase for a 20 s phase, so a long plan on ten thousand hosts held gigabytes until the
// run ended. With a results database, `stormark run` drops every interval series of a result
// (its own and its parts') the moment its row is handed to the database (CutSeries: the one
// table that reads a series, the validity window, measures it from the stored rows at the
// phase's end, report/validity.h ShareWindow), and once the phase's table is printed,
// everything but what the run's tables, status and sweep and baseline summaries read
// (CutToSummary). The JSON report, the fio
// JSON and logs, the bonnie++ CSV and the sweep summary read each phase back through FullPhase.
#ifndef STORMARK_CONTROLLER_RUN_FULL_PHASE_H_
#define STORMARK_CONTROLLER_RUN_FULL_PHASE_H_

#include <cstddef>
#include <optional>

#include "common/status.h"
#include "controller/fleet/packed_series.h"
#include "controller/run/run_record.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// Keeps of `result` what a phase's summary row, its validity verdict and the run's status read:
// state, error, totals, timed region, start lateness, CPU, the latency histogram, warnings, the
// stonewall figures and a stuck worker. Everything else (interval series, measurements, jobs,
// threads, environments, resolved settings, tuning, device counters, verification, cache) goes.
void CutToSummary(stormark::v1::PhaseResult* result);

// Drops every interval series of `result`: its own and its parts' (its measurements', its jobs'
// and its threads', which hold only series). They grow with the phase's length.
void CutSeries(stormark::v1::PhaseResult* result);

// Cuts every result of phase `index` of `run` to its summary and marks it trimmed: for a run
// whose `read_back` reads the phase back.
void CutPhaseToSummaries(RunRecord* run, size_t index);

// Phase `index` of `run` with every detail of its results: the phase itself, or, when results
// of it were trimmed, a copy with those read back, their interval series packed
// (HostOutcome::packed_series: fleet/packed_series.h WithSeries has them), so that a phase of long
// results is held at a fraction of its parsed size. When they cannot be, the trimmed results stand
// in and status() says why.
class FullPhase {
 public:
  FullPhase(const RunRecord& run, size_t index);

  const PhaseOutcome& operator*() const { return copy_ ? *copy_ : *phase_; }
  const PhaseOutcome* operator->() const { return &**this; }
  const common::Status& status() const { return status_; }
  // Sets *first to status() when it is not OK and *first is (first may be nullptr).
  void KeepFirstError(common::Status* first) const {
    if (first != nullptr && first->ok() && !status_.ok()) *first = status_;
  }

 private:
  const PhaseOutcome* phase_;
  std::optional<PhaseOutcome> copy_;
  common::Status status_;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_FULL_PHASE_H_
