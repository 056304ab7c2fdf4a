// The results store as `stormark run` uses it: the run row at the start, each phase's row as
// it starts and each host's as its result arrives (phase_writer.h), the end status at the end. A
// write that fails is reported once on `err` and the journal stops writing, so the run and its
// other outputs (tables, JSON) go on. Without a store (--no-db) every call does nothing. Not
// thread-safe.
#ifndef STORMARK_CONTROLLER_RESULTS_RUN_JOURNAL_H_
#define STORMARK_CONTROLLER_RESULTS_RUN_JOURNAL_H_

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/results/phase_writer.h"
#include "controller/results/results_store.h"

namespace stormark::controller {

class RunJournal {
 public:
  // `store` may be nullptr.
  RunJournal(std::unique_ptr<ResultsStore> store, std::FILE* err)
      : store_(std::move(store)), err_(err) {}

  void Begin(const RunRecord& run, const RunStart& start);
  // A phase in flight on `hosts` hosts: its row as it starts (`phase` holds its plan, id and
  // mode), each host's row as its result arrives (through host_done(), which is thread-safe
  // and nullptr without a store), and at its end the rows still missing and the clocks.
  // host_done() drops every series of each result once its row is queued (run/full_phase.h
  // CutSeries), and EndPhase gives back those of any row a failed write lost.
  void BeginPhase(const std::string& run_id, size_t index, const PhaseOutcome& phase, size_t hosts);
  Fleet::HostDoneFn host_done();
  void EndPhase(const std::string& run_id, size_t index, PhaseOutcome* outcome);
  // After EndPhase: measures what each host whose series host_done() dropped did while all
  // hosts ran from its stored series (report/validity.h ShareWindow), so that the phase's
  // table gives the same window figures as from the series in memory. On an error, those
  // hosts' parts are estimated pro rata.
  common::Status ShareWindow(const std::string& run_id, size_t index, PhaseOutcome* outcome) const;
  // The hooks and skipped points `run` gained since the last call.
  void Events(const RunRecord& run);
  void Finish(const RunRecord& run, int64_t finished_unix_nanos, std::string_view status);

  // Reads the stored results of phase `index` back, by host index (results_query.h
  // LoadPhaseResults), through the journal's own connection: a file removed or renamed since
  // still reads. Not while a phase is in flight.
  common::StatusOr<std::vector<std::optional<stormark::v1::PhaseResult>>> ReadBack(
      const std::string& run_id, size_t index, size_t hosts,
      std::vector<std::string>* packed_series = nullptr) const;

  // True while the store holds everything written so far.
  bool healthy() const { return store_ != nullptr && !failed_; }
  // The store's file, or "" without one.
  std::string path() const { return store_ ? store_->path() : ""; }

 private:
  void Check(const common::Status& status, std::string_view what);

  std::unique_ptr<ResultsStore> store_;
  std::FILE* err_;
  std::unique_ptr<PhaseWriter> writer_;  // While a phase runs.
  bool failed_ = false;
  size_t hooks_written_ = 0;
  size_t skipped_written_ = 0;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_RUN_JOURNAL_H_
