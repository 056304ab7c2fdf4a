// Reading the results history back: the list of runs, a run named by the user, and a whole
// run rebuilt as the RunRecord `stormark run` had, so the same report code prints it.
//
// Pure reads; safe while a controller writes the same file (WAL readers see the last
// committed phase). Not thread-safe per store.
#ifndef STORMARK_CONTROLLER_RESULTS_RESULTS_QUERY_H_
#define STORMARK_CONTROLLER_RESULTS_RESULTS_QUERY_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "controller/plan/plan.h"
#include "controller/results/results_store.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

// One run as `stormark results list` shows it.
struct RunListing {
  std::string run_id;
  int64_t started_unix_nanos = 0;
  // 0 while running, or when a crash ended the run.
  int64_t finished_unix_nanos = 0;
  // The stored status, except that a "running" run whose controller is gone reads
  // kRunIncomplete.
  std::string status;
  std::string label;
  RunMode mode = RunMode::kConcurrent;
  size_t planned_phases = 0;
  // Phases that ended; one in flight, or cut off by its controller's end, is not counted.
  size_t recorded_phases = 0;
  std::vector<std::string> hosts;
  std::string stormark_version;
};

// The error of a host without a row in a phase that had not ended: its result had not arrived
// when the run was read, or never will (the controller stopped during the phase). LoadRun
// gives such a phase a row for every host of the run.
inline constexpr char kNoResultRecorded[] =
    "no result recorded: the phase had not ended (still running, or its controller stopped)";

struct StoredRun {
  RunListing listing;
  // The run as the controller had it; `interrupted` is set for an interrupted run.
  RunRecord record;
};

// Every run, newest first.
common::StatusOr<std::vector<RunListing>> ListRuns(const ResultsStore& store);

// The run id `ref` names: "latest" (the newest run), a whole run id, or a prefix of exactly
// one. NOT_FOUND or INVALID_ARGUMENT (ambiguous, listing the candidates) otherwise.
common::StatusOr<std::string> ResolveRun(const ResultsStore& store, std::string_view ref);

// What LoadRun keeps of each result's interval series.
enum class SeriesKept {
  // Packed apart from the result (HostOutcome::packed_series; fleet/packed_series.h WithSeries
  // and OwnSeries open them): for the outputs that draw or write series.
  kPacked,
  // None. As each phase is read, each host's share of the window in which all hosts ran is
  // measured from them (HostOutcome::window_share, as `stormark run` measures it from the
  // stored rows), and they go; the rest of each result is whole. For the tables (`results
  // show`, `results compare`), which read no series: a fleet's run of long phases is mostly
  // series.
  kNone,
};

// The whole run. DATA_LOSS when a stored protobuf does not decode.
common::StatusOr<StoredRun> LoadRun(const ResultsStore& store, const std::string& run_id,
                                    SeriesKept series = SeriesKept::kPacked);

// The stored results of phase `phase_index` (from 0) of a run of `hosts` hosts, by host index:
// nullopt for a host without a row or without a result. DATA_LOSS when one does not decode or
// names a host the run has not. With `packed_series`, each result's interval series are packed
// into it, by host index, as the result is read (fleet/packed_series.h): a phase of long
// results is then held at a fraction of its parsed size.
common::StatusOr<std::vector<std::optional<stormark::v1::PhaseResult>>> LoadPhaseResults(
    const ResultsStore& store, const std::string& run_id, size_t phase_index, size_t hosts,
    std::vector<std::string>* packed_series = nullptr);

// Passes every stored sample of the interval series of phase `phase_index` of a run of `hosts`
// hosts to `sample`, with its host's index, one row at a time (report/validity.h
// ShareWindow). DATA_LOSS when one names a host the run has not.
common::Status ForEachSeriesSample(
    const ResultsStore& store, const std::string& run_id, size_t phase_index, size_t hosts,
    const std::function<void(size_t host, const stormark::v1::IntervalSample&)>& sample);

// A note of a schema upgrade (results_schema.h) as one "stormark: ..." line on `err`.
SchemaNote SchemaNoteTo(std::FILE* err);

// The store at `db_path` (DefaultResultsPath() when empty) for reading; errors begin
// "results database". Before an older file is upgraded, one "stormark: ..." line on `err` says
// so (it can take a while).
common::StatusOr<std::unique_ptr<ResultsStore>> OpenResultsForReading(const std::string& db_path,
                                                                      std::FILE* err);

// The run `ref` names (see ResolveRun), loaded as LoadRun does.
common::StatusOr<StoredRun> LoadNamedRun(const ResultsStore& store, std::string_view ref,
                                         SeriesKept series = SeriesKept::kPacked);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_RESULTS_QUERY_H_
