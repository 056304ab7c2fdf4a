#include "controller/results/results_store.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "common/cache_report.h"
#include "common/histogram.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/version.h"
#include "controller/report/summary.h"
#include "controller/results/results_schema.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;
using sqlite::Statement;
using sqlite::Transaction;

std::string ModeName(RunMode mode) {
  return mode == RunMode::kSequential ? "sequential" : "concurrent";
}

// Protobuf fields are unsigned where SQLite integers are signed; no figure comes near 2^63.
int64_t I(uint64_t value) { return static_cast<int64_t>(value); }

std::string Serialized(const google::protobuf::MessageLite& message) {
  std::string bytes;
  message.SerializeToString(&bytes);
  return bytes;
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += StrCat(text.empty() ? "" : "\n", line);
  return text;
}

// The environment rows of one host at one point of the run (phase_index -1: its start).
Status AddEnvironment(Statement& insert, const std::string& run_id, int64_t host_index,
                      int64_t phase_index, const std::string& scope,
                      const google::protobuf::Map<std::string, std::string>& facts) {
  for (const auto& [key, value] : facts) {
    RETURN_IF_ERROR(insert.Insert(run_id, host_index, phase_index, scope, key, value));
  }
  return absl::OkStatus();
}

StatusOr<Statement> PrepareEnvironment(const sqlite::Database& db) {
  return db.Prepare("INSERT OR REPLACE INTO environment VALUES (?,?,?,?,?,?)");
}

// The statements that write a host's row and its detail tables, prepared once for all the
// hosts of a transaction: at 10,000 hosts, preparing them for each host costs seconds.
struct HostStatements {
  static StatusOr<HostStatements> Prepare(const sqlite::Database& db) {
    ASSIGN_OR_RETURN(Statement host,
                     db.Prepare("INSERT INTO host_results VALUES "
                                "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
    ASSIGN_OR_RETURN(Statement environment, PrepareEnvironment(db));
    ASSIGN_OR_RETURN(Statement bucket,
                     db.Prepare("INSERT INTO latency_buckets VALUES (?,?,?,?,?,?,?,?)"));
    ASSIGN_OR_RETURN(Statement sample,
                     db.Prepare("INSERT OR REPLACE INTO series VALUES (?,?,?,?,?,?,?)"));
    ASSIGN_OR_RETURN(
        Statement measurement,
        db.Prepare("INSERT INTO measurements VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
    ASSIGN_OR_RETURN(Statement resolved, db.Prepare("INSERT INTO resolved VALUES (?,?,?,?,?)"));
    return HostStatements{std::move(host),   std::move(environment), std::move(bucket),
                          std::move(sample), std::move(measurement), std::move(resolved)};
  }

  Statement host;
  Statement environment;
  Statement bucket;
  Statement sample;
  Statement measurement;
  Statement resolved;
};

// One host's row and its detail tables; runs inside the caller's transaction.
Status AddHost(HostStatements& statements, const std::string& run_id, size_t phase_index,
               size_t host_index, const HostOutcome& host, const RowSummary& row) {
  const int64_t p = static_cast<int64_t>(phase_index);
  const int64_t h = static_cast<int64_t>(host_index);
  const stormark::v1::PhaseResult empty;
  const stormark::v1::PhaseResult& r = host.result ? *host.result : empty;
  const common::LatencyHistogram& latency = row.latency;
  Statement& insert_host = statements.host;
  insert_host.Bind(1, run_id)
      .Bind(2, p)
      .Bind(3, h)
      .Bind(4, host.host)
      .Bind(5, host.target)
      .Bind(6, row.status)
      .Bind(7, row.error)
      .Bind(8, I(row.bytes))
      .Bind(9, I(row.ops))
      .Bind(10, row.elapsed_seconds)
      .Bind(11, row.bytes_per_second)
      .Bind(12, row.elapsed_seconds > 0 ? static_cast<double>(row.ops) / row.elapsed_seconds : 0.0)
      .Bind(13, row.cpu_percent)
      .Bind(14, I(latency.count()))
      .Bind(15, I(latency.sum()))
      .Bind(16, I(latency.min()))
      .Bind(17, I(latency.Percentile(50)))
      .Bind(18, I(latency.Percentile(99)))
      .Bind(19, I(latency.max()))
      .Bind(20, r.start_unix_nanos())
      .Bind(21, r.end_unix_nanos())
      .Bind(22, r.start_late_nanos())
      .Bind(23, host.clock.offset_nanos)
      .Bind(24, host.clock.uncertainty_nanos)
      .Bind(25, JoinLines(row.warnings));
  if (host.result) {
    insert_host.BindBlob(26, Serialized(*host.result));
  } else {
    insert_host.BindNull(26);
  }
  insert_host.Bind(27, host.clock.rtt_nanos).Bind(28, host.clock.moved_nanos);
  RETURN_IF_ERROR(insert_host.Run());
  if (!host.result) return absl::OkStatus();
  RETURN_IF_ERROR(
      AddEnvironment(statements.environment, run_id, h, p, "host", r.host_environment()));
  RETURN_IF_ERROR(AddEnvironment(statements.environment, run_id, h, p,
                                 StrCat("target:", host.target), r.target_environment()));

  Statement& insert_bucket = statements.bucket;
  const auto& histogram = r.latency();
  for (int i = 0; i < histogram.bucket_index_size() && i < histogram.bucket_count_size(); ++i) {
    const uint32_t index = histogram.bucket_index(i);
    const bool known = index < common::LatencyHistogram::kBucketCount;
    RETURN_IF_ERROR(insert_bucket.Insert(
        run_id, p, h, int64_t{histogram.sub_bucket_bits()}, int64_t{index},
        known ? I(common::LatencyHistogram::BucketLowerBound(index)) : int64_t{-1},
        known ? I(common::LatencyHistogram::BucketWidth(index)) : int64_t{-1},
        I(histogram.bucket_count(i))));
  }
  Statement& insert_sample = statements.sample;
  for (const auto& s : r.series()) {
    RETURN_IF_ERROR(insert_sample.Insert(run_id, p, h, s.offset_nanos(), s.length_nanos(),
                                         I(s.bytes()), I(s.ops())));
  }
  Statement& insert_measurement = statements.measurement;
  for (int i = 0; i < r.measurements_size(); ++i) {
    const auto& m = r.measurements(i);
    auto decoded = common::LatencyHistogram::FromProto(m.latency());
    auto figure = [&](double percentile) -> std::optional<int64_t> {
      if (!decoded.ok() || decoded->count() == 0) return std::nullopt;
      return I(percentile >= 100 ? decoded->max() : decoded->Percentile(percentile));
    };
    RETURN_IF_ERROR(insert_measurement.Insert(
        run_id, p, h, int64_t{i}, m.name(), I(m.bytes()), I(m.ops()), m.elapsed_nanos(),
        m.cpu_user_nanos(), m.cpu_system_nanos(), int64_t{m.too_fast()}, int64_t{m.skipped()},
        figure(50), figure(99), figure(100), sqlite::BlobParam{Serialized(m.latency())}));
  }
  Statement& insert_resolved = statements.resolved;
  for (const auto& [key, value] : r.resolved()) {
    RETURN_IF_ERROR(insert_resolved.Insert(run_id, p, h, key, value));
  }
  return absl::OkStatus();
}

// Puts the file in WAL mode (it stays so): readers never block the writer then. Switching takes
// the file's exclusive lock, for which SQLite calls no busy handler: another controller opening
// the same new file at that moment (two runs started at once, reading its schema version) made
// the switch fail at once with "database is locked". Tried again for as long as the busy timeout.
Status UseWal(sqlite::Database* db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (true) {
    Status status = db->Exec("PRAGMA journal_mode = WAL");
    if (status.ok() || status.code() != absl::StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() > deadline) {
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::string DefaultResultsPath() {
  const char* data_home = std::getenv("XDG_DATA_HOME");
  if (data_home != nullptr && data_home[0] == '/') {
    return StrCat(data_home, "/stormark/results.db");
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return StrCat(home, "/.local/share/stormark/results.db");
  return "";
}

StatusOr<std::unique_ptr<ResultsStore>> ResultsStore::OpenWith(const std::string& path, bool create,
                                                               const SchemaNote& note) {
  if (path.empty()) {
    return absl::InvalidArgumentError(
        "no results database: set HOME or XDG_DATA_HOME, or give --db PATH (or --no-db)");
  }
  if (create) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code error;
    if (!parent.empty()) std::filesystem::create_directories(parent, error);
    if (error) return common::ErrnoError(StrCat("cannot create ", parent.string()), error.value());
  } else {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return common::ErrnoError(path, errno);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db, sqlite::Database::Open(path, create));
  // The first statement reads the file: a file that is not a database fails here.
  RETURN_IF_ERROR(PrepareSchema(db.get(), create, note));
  RETURN_IF_ERROR(UseWal(db.get()));
  RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys = ON"));
  return std::unique_ptr<ResultsStore>(new ResultsStore(std::move(db)));
}

StatusOr<std::unique_ptr<ResultsStore>> ResultsStore::Open(const std::string& path,
                                                           const SchemaNote& note) {
  return OpenWith(path, /*create=*/true, note);
}

StatusOr<std::unique_ptr<ResultsStore>> ResultsStore::OpenExisting(const std::string& path,
                                                                   const SchemaNote& note) {
  return OpenWith(path, /*create=*/false, note);
}

Status ResultsStore::BeginRun(const RunRecord& run, const RunStart& start) {
  ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Statement insert_run,
                   db_->Prepare("INSERT INTO runs (run_id, started_unix_nanos, "
                                "finished_unix_nanos, status, label, mode, planned_phases, "
                                "stormark_version, owner_host, owner_pid, owner_start_ticks) "
                                "VALUES (?,?,NULL,?,?,?,?,?,?,?,?)"));
  RETURN_IF_ERROR(insert_run.Insert(
      run.run_id, run.started_unix_nanos, kRunRunning, start.label, ModeName(start.mode),
      static_cast<int64_t>(start.planned_phases), common::kSoftwareVersion, start.owner.host,
      start.owner.pid, start.owner.start_ticks));
  ASSIGN_OR_RETURN(Statement insert_agent,
                   db_->Prepare("INSERT INTO agents VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  ASSIGN_OR_RETURN(Statement insert_target,
                   db_->Prepare("INSERT OR REPLACE INTO targets VALUES (?,?,?,?,?,?,?,?,?,?)"));
  ASSIGN_OR_RETURN(Statement insert_environment, PrepareEnvironment(*db_));
  ASSIGN_OR_RETURN(Statement insert_label,
                   db_->Prepare("INSERT OR REPLACE INTO labels VALUES (?,?,?,?)"));
  for (size_t i = 0; i < run.agents.size(); ++i) {
    const AgentRecord& a = run.agents[i];
    const int64_t index = static_cast<int64_t>(i);
    RETURN_IF_ERROR(insert_agent.Insert(
        run.run_id, index, a.host, a.error, a.info.hostname(), a.info.agent_version(),
        a.info.kernel(), a.info.cpu_model(), int64_t{a.info.cpu_count()}, I(a.info.ram_bytes()),
        a.clock.offset_nanos, a.clock.rtt_nanos, a.clock.uncertainty_nanos,
        sqlite::BlobParam{Serialized(a.info)}));
    for (const auto& [key, value] : a.labels) {
      RETURN_IF_ERROR(insert_label.Insert(run.run_id, index, key, value));
    }
    RETURN_IF_ERROR(
        AddEnvironment(insert_environment, run.run_id, index, -1, "host", a.info.environment()));
    for (const auto& t : a.info.targets()) {
      RETURN_IF_ERROR(AddEnvironment(insert_environment, run.run_id, index, -1,
                                     StrCat("target:", t.name()), t.environment()));
      RETURN_IF_ERROR(insert_target.Insert(run.run_id, index, t.name(), t.kind(), t.path(),
                                           t.filesystem(), t.mount_options(), t.device(),
                                           I(t.free_bytes()), I(t.total_bytes())));
    }
  }
  return transaction.Commit();
}

Status ResultsStore::BeginPhase(const std::string& run_id, size_t phase_index,
                                const PhaseOutcome& phase) {
  const int64_t p = static_cast<int64_t>(phase_index);
  const PhasePlan& plan = phase.plan;
  ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Statement insert_phase,
                   db_->Prepare("INSERT INTO phases VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  RETURN_IF_ERROR(insert_phase.Insert(
      run_id, p, phase.phase_id, plan.name, int64_t{plan.repetition},
      DescribeSweepPoint(plan.sweep_point), plan.target, common::WorkloadName(plan.spec),
      plan.Describe(), ModeName(phase.mode), common::CacheModeName(plan.spec.cache()),
      phase.start_at_unix_nanos, phase.start_skew_nanos, phase.start_skew_uncertainty_nanos,
      sqlite::BlobParam{Serialized(plan.spec)},
      plan.start_spread_limit > 0 ? plan.start_spread_limit : 0.01, /*finished=*/int64_t{0},
      phase.start_lead_nanos));
  ASSIGN_OR_RETURN(Statement insert_sweep,
                   db_->Prepare("INSERT INTO sweep_values VALUES (?,?,?,?,?)"));
  for (size_t i = 0; i < plan.sweep_point.size(); ++i) {
    RETURN_IF_ERROR(insert_sweep.Insert(run_id, p, static_cast<int64_t>(i),
                                        plan.sweep_point[i].first, plan.sweep_point[i].second));
  }
  return transaction.Commit();
}

Status ResultsStore::AddHosts(const std::string& run_id, size_t phase_index,
                              const std::vector<std::pair<size_t, HostOutcome>>& hosts) {
  size_t k = 0;
  return AddHosts(run_id, phase_index, [&](size_t* h, HostOutcome* host) -> StatusOr<bool> {
    if (k == hosts.size()) return false;
    *h = hosts[k].first;
    *host = hosts[k++].second;
    return true;
  });
}

Status ResultsStore::AddHosts(const std::string& run_id, size_t phase_index,
                              const NextHostFn& next) {
  ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(HostStatements statements, HostStatements::Prepare(*db_));
  size_t h = 0;
  HostOutcome host;
  while (true) {
    ASSIGN_OR_RETURN(const bool more, next(&h, &host));
    if (!more) break;
    RETURN_IF_ERROR(AddHost(statements, run_id, phase_index, h, host, SummarizeHost(host)));
  }
  return transaction.Commit();
}

Status ResultsStore::EndPhase(const std::string& run_id, size_t phase_index,
                              const PhaseOutcome& outcome, const std::vector<char>& written) {
  const int64_t p = static_cast<int64_t>(phase_index);
  ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Statement update_phase,
                   db_->Prepare("UPDATE phases SET start_at_unix_nanos = ?, start_skew_nanos = ?, "
                                "start_skew_uncertainty_nanos = ?, start_lead_nanos = ?, "
                                "finished = 1 WHERE run_id = ? AND phase_index = ?"));
  RETURN_IF_ERROR(update_phase.Insert(outcome.start_at_unix_nanos, outcome.start_skew_nanos,
                                      outcome.start_skew_uncertainty_nanos,
                                      outcome.start_lead_nanos, run_id, p));
  // The clocks were bracketed once every host had ended: a row written as its result came
  // holds the estimate from the start.
  ASSIGN_OR_RETURN(Statement update_clock,
                   db_->Prepare("UPDATE host_results SET clock_offset_nanos = ?, "
                                "clock_uncertainty_nanos = ?, clock_rtt_nanos = ?, "
                                "clock_moved_nanos = ? "
                                "WHERE run_id = ? AND phase_index = ? AND host_index = ?"));
  ASSIGN_OR_RETURN(HostStatements statements, HostStatements::Prepare(*db_));
  for (size_t h = 0; h < outcome.hosts.size(); ++h) {
    const HostOutcome& host = outcome.hosts[h];
    if (h < written.size() && written[h]) {
      RETURN_IF_ERROR(update_clock.Insert(host.clock.offset_nanos, host.clock.uncertainty_nanos,
                                          host.clock.rtt_nanos, host.clock.moved_nanos, run_id, p,
                                          static_cast<int64_t>(h)));
    } else {
      RETURN_IF_ERROR(AddHost(statements, run_id, phase_index, h, host, SummarizeHost(host)));
    }
  }
  return transaction.Commit();
}

Status ResultsStore::AddHook(const std::string& run_id, size_t position, const HookOutcome& hook) {
  ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Statement insert,
                   db_->Prepare("INSERT INTO hooks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  RETURN_IF_ERROR(insert.Bind(1, run_id)
                      .Bind(2, I(position))
                      .Bind(3, I(hook.before_phase))
                      .Bind(4, hook.what)
                      .Bind(5, hook.line)
                      .Bind(6, hook.point)
                      .Bind(7, hook.after)
                      .Bind(8, I(hook.hosts))
                      .Bind(9, hook.longest_nanos)
                      .Run());
  for (size_t h = 0; h < hook.failures.size(); ++h) {
    ASSIGN_OR_RETURN(Statement failure,
                     db_->Prepare("INSERT INTO hook_failures VALUES (?, ?, ?, ?, ?)"));
    RETURN_IF_ERROR(failure.Bind(1, run_id)
                        .Bind(2, I(position))
                        .Bind(3, I(h))
                        .Bind(4, hook.failures[h].first)
                        .Bind(5, hook.failures[h].second)
                        .Run());
  }
  return transaction.Commit();
}

Status ResultsStore::AddSkippedPoint(const std::string& run_id, size_t position,
                                     const SkippedPoint& point) {
  ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Statement insert,
                   db_->Prepare("INSERT INTO skipped_points VALUES (?, ?, ?, ?)"));
  RETURN_IF_ERROR(insert.Bind(1, run_id)
                      .Bind(2, I(position))
                      .Bind(3, I(point.before_phase))
                      .Bind(4, point.point)
                      .Run());
  return transaction.Commit();
}

Status ResultsStore::FinishRun(const RunRecord& run, int64_t finished_unix_nanos,
                               std::string_view status) {
  const std::string& run_id = run.run_id;
  ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Statement update,
                   db_->Prepare("UPDATE runs SET status = ?, finished_unix_nanos = ?, stopped = ? "
                                "WHERE run_id = ?"));
  RETURN_IF_ERROR(update.Bind(1, status)
                      .Bind(2, finished_unix_nanos)
                      .Bind(3, run.stopped)
                      .Bind(4, run_id)
                      .Run());
  return transaction.Commit();
}

}  // namespace stormark::controller
