// The results history: every run, written into one SQLite file as it goes (each phase's row as
// it starts, each host's as its result arrives), so a crash of the controller loses only the
// results that had not come in. `stormark results` reads it back (results_query.h).
//
// Schema version 5 (PRAGMA user_version = 5; an older file is upgraded in place when opened,
// adding the tables of later versions, and its runs stay readable). Times are ns since
// the Unix epoch; every protobuf column holds the message exactly as the controller had it, so
// nothing an agent sent is ever lost; the other columns are copies for queries.
//
//   runs          one row per `stormark run`, written when it starts
//     run_id TEXT PRIMARY KEY, started_unix_nanos, finished_unix_nanos (NULL while running),
//     status ('running' | 'completed' | 'partial' | 'interrupted' | 'failed': the run's
//     StatusOf, report/run_status.h; 'failed' also for a run refused before any phase, and
//     for any run that was not complete before schema 3), label (--label, the plan
//     file, or the phase names), mode ('concurrent' | 'sequential'), planned_phases,
//     stormark_version, owner_host, owner_pid, owner_start_ticks (the writing controller,
//     see run_owner.h: a 'running' run whose owner is gone reads as incomplete)
//   agents        one row per host of the run
//     run_id, host_index, host, error, hostname, agent_version, kernel, cpu_model, cpu_count,
//     ram_bytes, clock_offset_nanos, clock_rtt_nanos, clock_uncertainty_nanos,
//     info BLOB (stormark.v1.AgentInfo as the agent reported it at the start of the run)
//   targets       each agent's targets as they were: run_id, host_index, name, kind, path,
//                 filesystem, mount_options, device, free_bytes, total_bytes
//   phases        one row per phase run (each repetition and sweep point is its own row),
//                 written as the phase starts, its hosts' rows as their results arrive
//     run_id, phase_index (order in the run, 0-based), phase_id, name, repetition (0-based),
//     sweep_point ("chunk=64k ra=4096", '' outside a sweep), target (as planned), workload,
//     description, mode, cache, start_at_unix_nanos, start_skew_nanos (NULL when unknown),
//     start_skew_uncertainty_nanos, spec BLOB (stormark.v1.PhaseSpec)
//   sweep_values  run_id, phase_index, position, key, value: the sweep point, one row a key
//   host_results  one row per host and phase
//     run_id, phase_index, host_index, host, target, status ('succeeded' | 'failed' |
//     'aborted' | 'error': no result), error, bytes, ops, elapsed_seconds, bytes_per_second,
//     ops_per_second, cpu_percent, latency_count, latency_sum_nanos, latency_min_nanos,
//     p50_nanos, p99_nanos, max_nanos, start_unix_nanos, end_unix_nanos, start_late_nanos,
//     clock_offset_nanos, clock_uncertainty_nanos, warnings (one per line),
//     result BLOB (stormark.v1.PhaseResult; NULL when the agent sent none)
//   latency_buckets  run_id, phase_index, host_index, sub_bucket_bits, bucket_index,
//                 lower_bound_nanos, width_nanos, count: the phase's latency histogram, so
//                 percentiles can be recomputed and merged across hosts and runs
//   series        run_id, phase_index, host_index, offset_nanos, length_nanos, bytes, ops
//   measurements  per-test figures (bonnie): run_id, phase_index, host_index, position, name,
//                 bytes, ops, elapsed_nanos, cpu_user_nanos, cpu_system_nanos, too_fast,
//                 skipped, p50_nanos, p99_nanos, max_nanos, latency BLOB (stormark.v1.Histogram)
//   resolved      run_id, phase_index, host_index, key, value: parameters the agent settled on
//   labels        run_id, host_index, key, value: the plan's labels of each host (v2)
//   environment   run_id, host_index, phase_index (-1: the start of the run), scope ('host' or
//                 'target:NAME'), key, value: the environment facts under the keys of
//                 agent/host/environment.h, as the agent reported them at the start of the run and
//                 as each phase was prepared (v2)
//   hooks         run_id, position, before_phase (phases recorded before it), what ('setup' |
//                 'teardown'), line, sweep_point, after_halt ('interrupt' | 'stop' | ''),
//                 hosts, longest_nanos: every setup and teardown line, written as it ran (v3)
//   hook_failures run_id, position, host_position, host, error: the hosts a hook failed on (v3)
//   skipped_points run_id, position, before_phase, sweep_point: points whose setup failed (v3)
//   runs.stopped  why --fail-fast stopped the run, '' otherwise (v3)
//   phases.start_spread_limit  the validity verdict's limit the phase ran under (v4)
//   phases.finished  1 once the phase ended; 0 while it runs, and for ever in a run whose
//                 controller died during it: its hosts without a row had sent no result yet,
//                 and start_at_unix_nanos is 0 when it never started (v5)
//   phases.start_lead_nanos  how far ahead the start instant was set (v6)
//   host_results.clock_rtt_nanos, host_results.clock_moved_nanos  the host's best clock round
//                 trip, and how far its offset moved over the phase (v6); 0 in rows written before
//   latency_buckets, series  stored in their primary key's b-tree (WITHOUT ROWID) since v7: the
//                 same columns and rows
//
// The file is in WAL mode; every write is one transaction. Not thread-safe: one thread at a
// time (the phase writer's thread while a phase runs, the run's own otherwise).
#ifndef STORMARK_CONTROLLER_RESULTS_RESULTS_STORE_H_
#define STORMARK_CONTROLLER_RESULTS_RESULTS_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "controller/fleet/fleet.h"
#include "controller/results/results_schema.h"
#include "controller/results/run_owner.h"
#include "controller/results/sqlite.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

inline constexpr int kResultsSchemaVersion = 7;

// Run statuses as stored. kRunIncomplete is never stored: readers show it for a run whose
// status is still "running" but whose controller is gone.
inline constexpr char kRunRunning[] = "running";
inline constexpr char kRunCompleted[] = "completed";
inline constexpr char kRunInterrupted[] = "interrupted";
inline constexpr char kRunPartial[] = "partial";
inline constexpr char kRunFailed[] = "failed";
inline constexpr char kRunIncomplete[] = "incomplete";

// What the run row records at the start, beside the RunRecord.
struct RunStart {
  std::string label;
  RunMode mode = RunMode::kConcurrent;
  size_t planned_phases = 0;
  RunOwner owner;
};

// $XDG_DATA_HOME/stormark/results.db, else $HOME/.local/share/stormark/results.db; empty
// when neither variable is set.
std::string DefaultResultsPath();

class ResultsStore {
 public:
  // Opens the store at `path` for writing, creating it (and its directory) when missing.
  // Fails with one line naming the file when it is not a SQLite database, holds other
  // tables, or has a schema newer than this build reads.
  // `note` is told before an older file is upgraded (results_schema.h).
  static common::StatusOr<std::unique_ptr<ResultsStore>> Open(const std::string& path,
                                                              const SchemaNote& note = {});
  // Opens an existing store for reading (`stormark results`); NOT_FOUND when there is none.
  static common::StatusOr<std::unique_ptr<ResultsStore>> OpenExisting(const std::string& path,
                                                                      const SchemaNote& note = {});

  // Records the run as "running", with its agents and their targets.
  common::Status BeginRun(const RunRecord& run, const RunStart& start);
  // Records a phase, with every host's outcome, histogram, series and measurements, in
  // three steps, so that a controller that dies during it leaves every host's result that
  // had arrived (phase_writer.h):
  // - its row, marked unfinished, before it runs (`phase` holds its plan, id and mode);
  common::Status BeginPhase(const std::string& run_id, size_t phase_index,
                            const PhaseOutcome& phase);
  // - hosts' rows as their results arrive, all of `hosts` in one transaction;
  common::Status AddHosts(const std::string& run_id, size_t phase_index,
                          const std::vector<std::pair<size_t, HostOutcome>>& hosts);
  //   The same, each host given by `next` in turn into *h and *host (it returns false when
  //   there are no more), so that a long batch is in memory one host at a time.
  using NextHostFn = std::function<common::StatusOr<bool>(size_t* h, HostOutcome* host)>;
  common::Status AddHosts(const std::string& run_id, size_t phase_index, const NextHostFn& next);
  // - its end: the start instant and skew, each written host's clock as bracketed at the
  //   end, the rows of hosts not written (`written[h]` is 0), and the mark that it finished.
  common::Status EndPhase(const std::string& run_id, size_t phase_index,
                          const PhaseOutcome& outcome, const std::vector<char>& written);
  // Marks the run as ended with `status` (kRunCompleted, kRunPartial, kRunInterrupted or
  // kRunFailed; report/run_status.h says which).
  // Records one setup or teardown line as soon as it ran, and a sweep point its setup made
  // skip: `position` counts them from 0 within the run.
  common::Status AddHook(const std::string& run_id, size_t position, const HookOutcome& hook);
  common::Status AddSkippedPoint(const std::string& run_id, size_t position,
                                 const SkippedPoint& point);
  // Also records why --fail-fast stopped the run.
  common::Status FinishRun(const RunRecord& run, int64_t finished_unix_nanos,
                           std::string_view status);

  const sqlite::Database& db() const { return *db_; }
  const std::string& path() const { return db_->path(); }

 private:
  explicit ResultsStore(std::unique_ptr<sqlite::Database> db) : db_(std::move(db)) {}
  static common::StatusOr<std::unique_ptr<ResultsStore>> OpenWith(const std::string& path,
                                                                  bool create,
                                                                  const SchemaNote& note);

  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_RESULTS_STORE_H_
