#include "controller/results/results_query.h"

#include <sys/stat.h>

#include <algorithm>

#include "common/strings.h"
#include "controller/fleet/packed_series.h"
#include "controller/fleet/result_check.h"
#include "controller/report/environment.h"
#include "controller/report/validity.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;
using sqlite::Statement;

constexpr char kListingColumns[] =
    "SELECT r.run_id, r.started_unix_nanos, r.finished_unix_nanos, r.status, r.label, r.mode, "
    "r.planned_phases, r.stormark_version, r.owner_host, r.owner_pid, r.owner_start_ticks, "
    "(SELECT COUNT(*) FROM phases p WHERE p.run_id = r.run_id AND p.finished = 1) "
    "FROM runs r ";

// A listing from a row of kListingColumns; the hosts are filled in by the caller.
RunListing ListingFromRow(const Statement& row) {
  RunListing listing;
  listing.run_id = row.Text(0);
  listing.started_unix_nanos = row.Int(1);
  listing.finished_unix_nanos = row.IsNull(2) ? 0 : row.Int(2);
  listing.status = row.Text(3);
  listing.label = row.Text(4);
  listing.mode = row.Text(5) == "sequential" ? RunMode::kSequential : RunMode::kConcurrent;
  listing.planned_phases = static_cast<size_t>(row.Int(6));
  listing.stormark_version = row.Text(7);
  RunOwner owner{row.Text(8), row.Int(9), row.Int(10)};
  if (listing.status == kRunRunning && !owner.Alive()) listing.status = kRunIncomplete;
  listing.recorded_phases = static_cast<size_t>(row.Int(11));
  return listing;
}

StatusOr<std::vector<std::string>> HostsOf(const sqlite::Database& db, const std::string& run_id) {
  ASSIGN_OR_RETURN(Statement query,
                   db.Prepare("SELECT host FROM agents WHERE run_id = ? ORDER BY host_index"));
  query.Bind(1, run_id);
  std::vector<std::string> hosts;
  while (true) {
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    hosts.push_back(query.Text(0));
  }
  return hosts;
}

template <typename Message>
Status Decode(const std::string& bytes, Message* message, std::string_view what,
              const std::string& path) {
  if (!message->ParseFromString(bytes)) {
    return absl::DataLossError(StrCat(path, ": the stored ", what, " does not decode"));
  }
  return absl::OkStatus();
}

// A stored row's host_index, checked against the run's `hosts`: a row for a host the run has
// not (a damaged or edited file) is refused rather than shown as one more host.
StatusOr<size_t> StoredHostIndex(int64_t h, size_t hosts, const std::string& path,
                                 const std::string& run_id, size_t phase_index) {
  if (h < 0 || static_cast<size_t>(h) >= hosts) {
    return absl::DataLossError(StrCat(path, ": run ", run_id, " phase ", phase_index + 1,
                                      " has a result of host ", h, ", which the run has not"));
  }
  return static_cast<size_t>(h);
}

Status LoadAgents(const sqlite::Database& db, const std::string& run_id, RunRecord* run) {
  ASSIGN_OR_RETURN(Statement query,
                   db.Prepare("SELECT host, error, info, clock_offset_nanos, clock_rtt_nanos, "
                              "clock_uncertainty_nanos FROM agents WHERE run_id = ? "
                              "ORDER BY host_index"));
  query.Bind(1, run_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return absl::OkStatus();
    AgentRecord agent;
    agent.host = query.Text(0);
    agent.error = query.Text(1);
    RETURN_IF_ERROR(Decode(query.Blob(2), &agent.info, "agent information", db.path()));
    agent.clock = {query.Int(3), query.Int(4), query.Int(5)};
    run->agents.push_back(std::move(agent));
  }
}

Status LoadLabels(const sqlite::Database& db, const std::string& run_id, RunRecord* run) {
  ASSIGN_OR_RETURN(Statement query,
                   db.Prepare("SELECT host_index, key, value FROM labels WHERE run_id = ? "
                              "ORDER BY host_index, rowid"));
  query.Bind(1, run_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return absl::OkStatus();
    const int64_t index = query.Int(0);
    if (index >= 0 && static_cast<size_t>(index) < run->agents.size()) {
      run->agents[static_cast<size_t>(index)].labels.emplace_back(query.Text(1), query.Text(2));
    }
  }
}

// The hooks, skipped points and --fail-fast reason of a run (schema 3; none before).
Status LoadRunEvents(const sqlite::Database& db, const std::string& run_id, RunRecord* run) {
  ASSIGN_OR_RETURN(Statement stopped, db.Prepare("SELECT stopped FROM runs WHERE run_id = ?"));
  stopped.Bind(1, run_id);
  ASSIGN_OR_RETURN(bool found, stopped.Step());
  if (found) run->stopped = stopped.Text(0);
  ASSIGN_OR_RETURN(
      Statement hooks,
      db.Prepare("SELECT position, before_phase, what, line, sweep_point, after_halt, "
                 "hosts, longest_nanos FROM hooks WHERE run_id = ? ORDER BY position"));
  ASSIGN_OR_RETURN(Statement failures,
                   db.Prepare("SELECT host, error FROM hook_failures WHERE run_id = ? AND "
                              "position = ? ORDER BY host_position"));
  hooks.Bind(1, run_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, hooks.Step());
    if (!row) break;
    HookOutcome hook;
    const int64_t position = hooks.Int(0);
    hook.before_phase = static_cast<size_t>(std::max<int64_t>(0, hooks.Int(1)));
    hook.what = hooks.Text(2);
    hook.line = hooks.Text(3);
    hook.point = hooks.Text(4);
    hook.after = hooks.Text(5);
    hook.hosts = static_cast<size_t>(std::max<int64_t>(0, hooks.Int(6)));
    hook.longest_nanos = hooks.Int(7);
    failures.Reset();
    failures.Bind(1, run_id).Bind(2, position);
    while (true) {
      ASSIGN_OR_RETURN(bool failed, failures.Step());
      if (!failed) break;
      hook.failures.emplace_back(failures.Text(0), failures.Text(1));
    }
    run->hooks.push_back(std::move(hook));
  }
  ASSIGN_OR_RETURN(Statement skipped,
                   db.Prepare("SELECT before_phase, sweep_point FROM skipped_points WHERE "
                              "run_id = ? ORDER BY position"));
  skipped.Bind(1, run_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, skipped.Step());
    if (!row) return absl::OkStatus();
    run->skipped_points.push_back(
        {static_cast<size_t>(std::max<int64_t>(0, skipped.Int(0))), skipped.Text(1)});
  }
}

// How long a run can have lasted, as its file tells, to bound the figures read back: to its
// recorded end; or, for a run with none (still running, or its controller stopped), to the
// file's last write (of the database or its write-ahead log), which came after every result in
// it.
struct RunSpan {
  int64_t nanos = 0;
  std::string is;  // "the run lasted"
};

RunSpan SpanOfRun(const std::string& path, const RunRecord& run) {
  // Instants between 1970 and 2116, so that an edited one cannot overflow the difference.
  const auto instant = [](int64_t unix_nanos) {
    return std::clamp<int64_t>(unix_nanos, 0, kLatestPlausibleUnixNanos);
  };
  const int64_t started = instant(run.started_unix_nanos);
  if (run.finished_unix_nanos != 0) {
    return {instant(run.finished_unix_nanos) - started, "the run lasted"};
  }
  int64_t written = 0;
  for (const std::string& file : {path, StrCat(path, "-wal")}) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) continue;
    written = std::max(written, int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec);
  }
  if (written == 0) written = kLatestPlausibleUnixNanos;
  return {instant(written) - started, "from the run's start to the last write of its results file"};
}

// SeriesKept::kNone for one phase read with its series packed: each host's share of the window
// measured from them, and they go.
Status MeasureWindowAndDropSeries(PhaseOutcome* outcome) {
  std::vector<std::string> packed(outcome->hosts.size());
  for (size_t h = 0; h < packed.size(); ++h) packed[h].swap(outcome->hosts[h].packed_series);
  return ShareWindow(outcome, [outcome, &packed](const SeriesSampleFn& sample) -> Status {
    for (size_t h = 0; h < packed.size(); ++h) {
      if (packed[h].empty()) continue;
      stormark::v1::PhaseResult series;  // PackSeries's form: its own series in `series`.
      if (!series.ParseFromString(packed[h])) {
        return absl::DataLossError(
            StrCat("the series of host ", outcome->hosts[h].host, " do not decode"));
      }
      std::string().swap(packed[h]);
      for (const auto& s : series.series()) sample(h, s);
    }
    return absl::OkStatus();
  });
}

Status LoadPhases(const sqlite::Database& db, const std::string& run_id, SeriesKept series_kept,
                  RunRecord* run) {
  ASSIGN_OR_RETURN(Statement phases,
                   db.Prepare("SELECT phase_index, phase_id, name, repetition, target, mode, "
                              "start_at_unix_nanos, start_skew_nanos, "
                              "start_skew_uncertainty_nanos, spec, start_spread_limit, finished, "
                              "start_lead_nanos FROM phases "
                              "WHERE run_id = ? "
                              "ORDER BY phase_index"));
  ASSIGN_OR_RETURN(Statement sweep,
                   db.Prepare("SELECT key, value FROM sweep_values WHERE run_id = ? AND "
                              "phase_index = ? ORDER BY position"));
  ASSIGN_OR_RETURN(Statement hosts,
                   db.Prepare("SELECT host, target, error, result, clock_offset_nanos, "
                              "clock_uncertainty_nanos, host_index, clock_rtt_nanos, "
                              "clock_moved_nanos FROM host_results WHERE "
                              "run_id = ? AND "
                              "phase_index = ? ORDER BY host_index"));
  phases.Bind(1, run_id);
  const RunSpan span = SpanOfRun(db.path(), *run);
  while (true) {
    ASSIGN_OR_RETURN(bool row, phases.Step());
    if (!row) return absl::OkStatus();
    const int64_t index = phases.Int(0);
    PhaseOutcome outcome;
    outcome.phase_id = phases.Text(1);
    outcome.plan.name = phases.Text(2);
    outcome.plan.repetition = static_cast<int>(phases.Int(3));
    outcome.plan.target = phases.Text(4);
    outcome.mode = phases.Text(5) == "sequential" ? RunMode::kSequential : RunMode::kConcurrent;
    outcome.start_at_unix_nanos = phases.Int(6);
    if (!phases.IsNull(7)) outcome.start_skew_nanos = phases.Int(7);
    outcome.start_skew_uncertainty_nanos = phases.Int(8);
    RETURN_IF_ERROR(Decode(phases.Blob(9), &outcome.plan.spec, "phase spec", db.path()));
    outcome.plan.start_spread_limit = phases.Double(10);
    const bool finished = phases.Int(11) != 0;
    outcome.ended = finished;
    outcome.start_lead_nanos = phases.Int(12);

    sweep.Bind(1, run_id).Bind(2, index);
    while (true) {
      ASSIGN_OR_RETURN(bool value, sweep.Step());
      if (!value) break;
      outcome.plan.sweep_point.emplace_back(sweep.Text(0), sweep.Text(1));
    }
    sweep.Reset();

    // One row per host of the run, at its index: a stored row for a host the run has not
    // (a damaged or edited file) is refused rather than shown as one more host.
    hosts.Bind(1, run_id).Bind(2, index);
    std::vector<char> present(run->agents.size(), 0);
    outcome.hosts.resize(run->agents.size());
    while (true) {
      ASSIGN_OR_RETURN(bool host_row, hosts.Step());
      if (!host_row) break;
      ASSIGN_OR_RETURN(const size_t h, StoredHostIndex(hosts.Int(6), run->agents.size(), db.path(),
                                                       run_id, static_cast<size_t>(index)));
      HostOutcome& host = outcome.hosts[h];
      present[h] = 1;
      host.host = hosts.Text(0);
      host.target = hosts.Text(1);
      host.error = hosts.Text(2);
      if (!hosts.IsNull(3)) {
        stormark::v1::PhaseResult result;
        RETURN_IF_ERROR(Decode(hosts.Blob(3), &result, "phase result", db.path()));
        // A figure no run can produce (recorded before results were checked as they came, or
        // edited since) makes the host's result a failure that names it, and the others stand.
        if (Status s = CheckStoredResult(result, span.nanos, span.is); !s.ok()) {
          host.error = StrCat("the stored result is not plausible: ", s.message());
        } else {
          // A run of long phases is mostly series: kept packed, a fleet's run is shown at a
          // fraction of its parsed size, and the outputs open one host's at a time.
          host.own_series_samples = result.series_size();
          host.result = std::move(result);
          host.packed_series = PackSeries(&*host.result);
        }
      }
      host.clock.offset_nanos = hosts.Int(4);
      host.clock.uncertainty_nanos = hosts.Int(5);
      host.clock.rtt_nanos = hosts.Int(7);
      host.clock.moved_nanos = hosts.Int(8);
    }
    hosts.Reset();
    for (size_t h = 0; h < present.size(); ++h) {
      if (present[h]) continue;
      if (finished) {
        return absl::DataLossError(StrCat(db.path(), ": run ", run_id, " phase ", index + 1,
                                          " ended without a row for host ", h));
      }
      // The phase had not ended: the host had sent no result yet, or never will (its
      // controller stopped). One the run could not use says why instead.
      HostOutcome& host = outcome.hosts[h];
      host.host = run->agents[h].host;
      host.target = outcome.plan.target;
      host.error = run->agents[h].error.empty() ? kNoResultRecorded : run->agents[h].error;
    }
    if (series_kept == SeriesKept::kNone) {
      RETURN_IF_ERROR(common::Annotate(MeasureWindowAndDropSeries(&outcome),
                                       StrCat(db.path(), ": run ", run_id, " phase ", index + 1)));
    }
    run->phases.push_back(std::move(outcome));
  }
}

}  // namespace

StatusOr<std::vector<RunListing>> ListRuns(const ResultsStore& store) {
  ASSIGN_OR_RETURN(Statement query,
                   store.db().Prepare(StrCat(kListingColumns,
                                             "ORDER BY r.started_unix_nanos DESC, r.run_id DESC")));
  std::vector<RunListing> runs;
  while (true) {
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    runs.push_back(ListingFromRow(query));
  }
  for (RunListing& run : runs) {
    ASSIGN_OR_RETURN(run.hosts, HostsOf(store.db(), run.run_id));
  }
  return runs;
}

StatusOr<std::string> ResolveRun(const ResultsStore& store, std::string_view ref) {
  if (ref.empty()) return absl::InvalidArgumentError("empty run id");
  if (ref == "latest") {
    ASSIGN_OR_RETURN(Statement query,
                     store.db().Prepare("SELECT run_id FROM runs ORDER BY started_unix_nanos "
                                        "DESC, run_id DESC LIMIT 1"));
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return absl::NotFoundError(StrCat(store.path(), ": no runs recorded yet"));
    return query.Text(0);
  }
  ASSIGN_OR_RETURN(Statement query,
                   store.db().Prepare("SELECT run_id FROM runs WHERE substr(run_id, 1, ?) = ? "
                                      "ORDER BY run_id LIMIT 6"));
  query.Bind(1, static_cast<int64_t>(ref.size())).Bind(2, ref);
  std::vector<std::string> matches;
  while (true) {
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) break;
    matches.push_back(query.Text(0));
    if (matches.back() == ref) return matches.back();  // A whole id beats longer ones.
  }
  if (matches.empty()) {
    return absl::NotFoundError(
        StrCat("no run '", ref, "' in ", store.path(), " (see 'stormark results list')"));
  }
  if (matches.size() > 1) {
    std::string candidates;
    for (size_t i = 0; i < matches.size() && i < 5; ++i) {
      candidates += StrCat(i == 0 ? "" : ", ", matches[i]);
    }
    return absl::InvalidArgumentError(StrCat("run '", ref, "' is ambiguous: it begins ", candidates,
                                             matches.size() > 5 ? ", ..." : "",
                                             "; give more of the id"));
  }
  return matches[0];
}

StatusOr<StoredRun> LoadRun(const ResultsStore& store, const std::string& run_id,
                            SeriesKept series) {
  ASSIGN_OR_RETURN(Statement query,
                   store.db().Prepare(StrCat(kListingColumns, "WHERE r.run_id = ?")));
  query.Bind(1, run_id);
  ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return absl::NotFoundError(StrCat("no run '", run_id, "' in ", store.path()));
  StoredRun run;
  run.listing = ListingFromRow(query);
  ASSIGN_OR_RETURN(run.listing.hosts, HostsOf(store.db(), run_id));
  run.record.run_id = run_id;
  run.record.started_unix_nanos = run.listing.started_unix_nanos;
  run.record.finished_unix_nanos = run.listing.finished_unix_nanos;
  run.record.interrupted = run.listing.status == kRunInterrupted;
  RETURN_IF_ERROR(LoadAgents(store.db(), run_id, &run.record));
  RETURN_IF_ERROR(LoadLabels(store.db(), run_id, &run.record));
  RETURN_IF_ERROR(LoadPhases(store.db(), run_id, series, &run.record));
  RETURN_IF_ERROR(LoadRunEvents(store.db(), run_id, &run.record));
  for (PhaseOutcome& phase : run.record.phases) LabelTransports(run.record.agents, &phase);
  return run;
}

StatusOr<std::vector<std::optional<stormark::v1::PhaseResult>>> LoadPhaseResults(
    const ResultsStore& store, const std::string& run_id, size_t phase_index, size_t hosts,
    std::vector<std::string>* packed_series) {
  ASSIGN_OR_RETURN(Statement query,
                   store.db().Prepare("SELECT host_index, result FROM host_results WHERE "
                                      "run_id = ? AND phase_index = ? AND result IS NOT NULL"));
  query.Bind(1, run_id).Bind(2, static_cast<int64_t>(phase_index));
  std::vector<std::optional<stormark::v1::PhaseResult>> results(hosts);
  if (packed_series != nullptr) packed_series->assign(hosts, std::string());
  while (true) {
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return results;
    ASSIGN_OR_RETURN(const size_t h,
                     StoredHostIndex(query.Int(0), hosts, store.path(), run_id, phase_index));
    auto& result = results[h];
    result.emplace();
    RETURN_IF_ERROR(Decode(query.Blob(1), &*result, "phase result", store.path()));
    if (packed_series != nullptr) (*packed_series)[h] = PackSeries(&*result);
  }
}

Status ForEachSeriesSample(
    const ResultsStore& store, const std::string& run_id, size_t phase_index, size_t hosts,
    const std::function<void(size_t, const stormark::v1::IntervalSample&)>& sample) {
  ASSIGN_OR_RETURN(Statement query,
                   store.db().Prepare("SELECT host_index, offset_nanos, length_nanos, bytes, ops "
                                      "FROM series WHERE run_id = ? AND phase_index = ?"));
  query.Bind(1, run_id).Bind(2, static_cast<int64_t>(phase_index));
  stormark::v1::IntervalSample s;
  while (true) {
    ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return absl::OkStatus();
    ASSIGN_OR_RETURN(const size_t h,
                     StoredHostIndex(query.Int(0), hosts, store.path(), run_id, phase_index));
    s.set_offset_nanos(query.Int(1));
    s.set_length_nanos(query.Int(2));
    s.set_bytes(static_cast<uint64_t>(query.Int(3)));
    s.set_ops(static_cast<uint64_t>(query.Int(4)));
    sample(h, s);
  }
}

SchemaNote SchemaNoteTo(std::FILE* err) {
  return [err](std::string_view line) {
    std::fprintf(err, "stormark: %.*s\n", static_cast<int>(line.size()), line.data());
    std::fflush(err);
  };
}

StatusOr<std::unique_ptr<ResultsStore>> OpenResultsForReading(const std::string& db_path,
                                                              std::FILE* err) {
  auto store = ResultsStore::OpenExisting(db_path.empty() ? DefaultResultsPath() : db_path,
                                          SchemaNoteTo(err));
  if (!store.ok()) return common::Annotate(store.status(), "results database");
  return store;
}

StatusOr<StoredRun> LoadNamedRun(const ResultsStore& store, std::string_view ref,
                                 SeriesKept series) {
  ASSIGN_OR_RETURN(std::string run_id, ResolveRun(store, ref));
  return LoadRun(store, run_id, series);
}

}  // namespace stormark::controller
