#include "controller/results/results_schema.h"

#include "common/strings.h"
#include "controller/results/results_store.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StrCat;
using sqlite::Transaction;

constexpr char kSchema[] = R"sql(
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  started_unix_nanos INTEGER NOT NULL,
  finished_unix_nanos INTEGER,
  status TEXT NOT NULL,
  label TEXT NOT NULL,
  mode TEXT NOT NULL,
  planned_phases INTEGER NOT NULL,
  stormark_version TEXT NOT NULL,
  owner_host TEXT NOT NULL,
  owner_pid INTEGER NOT NULL,
  owner_start_ticks INTEGER NOT NULL
);
CREATE TABLE agents (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  host_index INTEGER NOT NULL,
  host TEXT NOT NULL,
  error TEXT NOT NULL,
  hostname TEXT NOT NULL,
  agent_version TEXT NOT NULL,
  kernel TEXT NOT NULL,
  cpu_model TEXT NOT NULL,
  cpu_count INTEGER NOT NULL,
  ram_bytes INTEGER NOT NULL,
  clock_offset_nanos INTEGER NOT NULL,
  clock_rtt_nanos INTEGER NOT NULL,
  clock_uncertainty_nanos INTEGER NOT NULL,
  info BLOB NOT NULL,
  PRIMARY KEY (run_id, host_index)
);
CREATE TABLE targets (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  host_index INTEGER NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  path TEXT NOT NULL,
  filesystem TEXT NOT NULL,
  mount_options TEXT NOT NULL,
  device TEXT NOT NULL,
  free_bytes INTEGER NOT NULL,
  total_bytes INTEGER NOT NULL,
  PRIMARY KEY (run_id, host_index, name)
);
CREATE TABLE phases (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  phase_index INTEGER NOT NULL,
  phase_id TEXT NOT NULL,
  name TEXT NOT NULL,
  repetition INTEGER NOT NULL,
  sweep_point TEXT NOT NULL,
  target TEXT NOT NULL,
  workload TEXT NOT NULL,
  description TEXT NOT NULL,
  mode TEXT NOT NULL,
  cache TEXT NOT NULL,
  start_at_unix_nanos INTEGER NOT NULL,
  start_skew_nanos INTEGER,
  start_skew_uncertainty_nanos INTEGER NOT NULL,
  spec BLOB NOT NULL,
  PRIMARY KEY (run_id, phase_index)
);
CREATE TABLE sweep_values (
  run_id TEXT NOT NULL,
  phase_index INTEGER NOT NULL,
  position INTEGER NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, phase_index, position),
  FOREIGN KEY (run_id, phase_index) REFERENCES phases ON DELETE CASCADE
);
CREATE TABLE host_results (
  run_id TEXT NOT NULL,
  phase_index INTEGER NOT NULL,
  host_index INTEGER NOT NULL,
  host TEXT NOT NULL,
  target TEXT NOT NULL,
  status TEXT NOT NULL,
  error TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  ops INTEGER NOT NULL,
  elapsed_seconds REAL NOT NULL,
  bytes_per_second REAL NOT NULL,
  ops_per_second REAL NOT NULL,
  cpu_percent REAL NOT NULL,
  latency_count INTEGER NOT NULL,
  latency_sum_nanos INTEGER NOT NULL,
  latency_min_nanos INTEGER NOT NULL,
  p50_nanos INTEGER NOT NULL,
  p99_nanos INTEGER NOT NULL,
  max_nanos INTEGER NOT NULL,
  start_unix_nanos INTEGER NOT NULL,
  end_unix_nanos INTEGER NOT NULL,
  start_late_nanos INTEGER NOT NULL,
  clock_offset_nanos INTEGER NOT NULL,
  clock_uncertainty_nanos INTEGER NOT NULL,
  warnings TEXT NOT NULL,
  result BLOB,
  PRIMARY KEY (run_id, phase_index, host_index),
  FOREIGN KEY (run_id, phase_index) REFERENCES phases ON DELETE CASCADE
);
CREATE TABLE latency_buckets (
  run_id TEXT NOT NULL,
  phase_index INTEGER NOT NULL,
  host_index INTEGER NOT NULL,
  sub_bucket_bits INTEGER NOT NULL,
  bucket_index INTEGER NOT NULL,
  lower_bound_nanos INTEGER NOT NULL,
  width_nanos INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (run_id, phase_index, host_index, bucket_index),
  FOREIGN KEY (run_id, phase_index, host_index) REFERENCES host_results ON DELETE CASCADE
);
CREATE TABLE series (
  run_id TEXT NOT NULL,
  phase_index INTEGER NOT NULL,
  host_index INTEGER NOT NULL,
  offset_nanos INTEGER NOT NULL,
  length_nanos INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  ops INTEGER NOT NULL,
  PRIMARY KEY (run_id, phase_index, host_index, offset_nanos),
  FOREIGN KEY (run_id, phase_index, host_index) REFERENCES host_results ON DELETE CASCADE
);
CREATE TABLE measurements (
  run_id TEXT NOT NULL,
  phase_index INTEGER NOT NULL,
  host_index INTEGER NOT NULL,
  position INTEGER NOT NULL,
  name TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  ops INTEGER NOT NULL,
  elapsed_nanos INTEGER NOT NULL,
  cpu_user_nanos INTEGER NOT NULL,
  cpu_system_nanos INTEGER NOT NULL,
  too_fast INTEGER NOT NULL,
  skipped INTEGER NOT NULL,
  p50_nanos INTEGER,
  p99_nanos INTEGER,
  max_nanos INTEGER,
  latency BLOB NOT NULL,
  PRIMARY KEY (run_id, phase_index, host_index, position),
  FOREIGN KEY (run_id, phase_index, host_index) REFERENCES host_results ON DELETE CASCADE
);
CREATE TABLE resolved (
  run_id TEXT NOT NULL,
  phase_index INTEGER NOT NULL,
  host_index INTEGER NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, phase_index, host_index, key),
  FOREIGN KEY (run_id, phase_index, host_index) REFERENCES host_results ON DELETE CASCADE
);
CREATE INDEX runs_by_start ON runs (started_unix_nanos);
)sql";

// Schema version 2 adds these tables; a version 1 file gets them by migration, and its runs
// simply have no rows in them (their environment is still in the stored protobufs, if the
// agents sent it).
constexpr char kSchemaV2[] = R"sql(
CREATE TABLE labels (
  run_id TEXT NOT NULL,
  host_index INTEGER NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, host_index, key),
  FOREIGN KEY (run_id, host_index) REFERENCES agents ON DELETE CASCADE
);
CREATE TABLE environment (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  host_index INTEGER NOT NULL,
  phase_index INTEGER NOT NULL,
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, host_index, phase_index, scope, key)
);
)sql";

// Schema version 3 adds the run's hooks, its skipped sweep points and why --fail-fast stopped
// it; runs recorded before have none of them.
constexpr char kSchemaV3[] = R"sql(
CREATE TABLE hooks (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  before_phase INTEGER NOT NULL,
  what TEXT NOT NULL,
  line TEXT NOT NULL,
  sweep_point TEXT NOT NULL,
  after_halt TEXT NOT NULL,
  hosts INTEGER NOT NULL,
  longest_nanos INTEGER NOT NULL,
  PRIMARY KEY (run_id, position)
);
CREATE TABLE hook_failures (
  run_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  host_position INTEGER NOT NULL,
  host TEXT NOT NULL,
  error TEXT NOT NULL,
  PRIMARY KEY (run_id, position, host_position),
  FOREIGN KEY (run_id, position) REFERENCES hooks ON DELETE CASCADE
);
CREATE TABLE skipped_points (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  before_phase INTEGER NOT NULL,
  sweep_point TEXT NOT NULL,
  PRIMARY KEY (run_id, position)
);
ALTER TABLE runs ADD COLUMN stopped TEXT NOT NULL DEFAULT '';
)sql";

// Schema version 4 keeps each phase's start_spread_limit, so that a stored run is judged by the
// limit it ran under (validity.h); runs recorded before get the default, 1%.
constexpr char kSchemaV4[] = R"sql(
ALTER TABLE phases ADD COLUMN start_spread_limit REAL NOT NULL DEFAULT 0.01;
)sql";

// Schema version 5 marks a phase finished once it ended: its row is written as it starts and its
// hosts' rows as their results arrive. Phases recorded before were written whole, at their end.
constexpr char kSchemaV5[] = R"sql(
ALTER TABLE phases ADD COLUMN finished INTEGER NOT NULL DEFAULT 1;
)sql";

// Schema version 6 keeps the clock figures and the start lead that the JSON report gives, so
// that `results export --format json` gives them too: each phase's start lead, and each host's
// best clock round trip and how far its offset moved over the phase. Rows recorded before read 0.
constexpr char kSchemaV6[] = R"sql(
ALTER TABLE phases ADD COLUMN start_lead_nanos INTEGER NOT NULL DEFAULT 0;
ALTER TABLE host_results ADD COLUMN clock_rtt_nanos INTEGER NOT NULL DEFAULT 0;
ALTER TABLE host_results ADD COLUMN clock_moved_nanos INTEGER NOT NULL DEFAULT 0;
)sql";

// Schema version 7 keeps the two tables of a row per sample or bucket (a host's series and its
// latency histogram: 800,000 series rows a phase at 2,000 hosts sampled every 50 ms) in their
// primary key's own b-tree (WITHOUT ROWID), where each row was written twice, once in the table
// and once in the key's index: the writer keeps up with a fleet's results sooner, and the file
// is smaller. Same columns, same rows; the rows recorded before are copied over.
constexpr char kSchemaV7[] = R"sql(
CREATE TABLE latency_buckets_v7 (
  run_id TEXT NOT NULL,
  phase_index INTEGER NOT NULL,
  host_index INTEGER NOT NULL,
  sub_bucket_bits INTEGER NOT NULL,
  bucket_index INTEGER NOT NULL,
  lower_bound_nanos INTEGER NOT NULL,
  width_nanos INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (run_id, phase_index, host_index, bucket_index),
  FOREIGN KEY (run_id, phase_index, host_index) REFERENCES host_results ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO latency_buckets_v7 SELECT run_id, phase_index, host_index, sub_bucket_bits,
  bucket_index, lower_bound_nanos, width_nanos, count FROM latency_buckets;
DROP TABLE latency_buckets;
ALTER TABLE latency_buckets_v7 RENAME TO latency_buckets;
CREATE TABLE series_v7 (
  run_id TEXT NOT NULL,
  phase_index INTEGER NOT NULL,
  host_index INTEGER NOT NULL,
  offset_nanos INTEGER NOT NULL,
  length_nanos INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  ops INTEGER NOT NULL,
  PRIMARY KEY (run_id, phase_index, host_index, offset_nanos),
  FOREIGN KEY (run_id, phase_index, host_index) REFERENCES host_results ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO series_v7 SELECT run_id, phase_index, host_index, offset_nanos, length_nanos, bytes,
  ops FROM series;
DROP TABLE series;
ALTER TABLE series_v7 RENAME TO series;
)sql";

}  // namespace

Status PrepareSchema(sqlite::Database* db, bool create, const SchemaNote& note) {
  auto newer = [db](int64_t version) {
    return absl::FailedPreconditionError(
        StrCat(db->path(), ": written by a newer stormark (results schema ", version,
               "; this one reads up to ", kResultsSchemaVersion, ")"));
  };
  ASSIGN_OR_RETURN(int64_t version, db->QueryInt("PRAGMA user_version"));
  if (version == kResultsSchemaVersion) return absl::OkStatus();
  if (version > kResultsSchemaVersion) return newer(version);
  if (version == 0 && !create) {
    ASSIGN_OR_RETURN(int64_t tables, db->QueryInt("SELECT COUNT(*) FROM sqlite_master"));
    if (tables == 0) return absl::NotFoundError(StrCat(db->path(), ": no results recorded yet"));
  }
  // Creating or upgrading, judged again under the write lock: another controller may be doing
  // the same at this moment (two runs started at once on a new file, or on one of an older
  // schema), and what it did is then no reason to refuse the file or to upgrade it twice. An
  // upgrade copies rows (schema 7: seconds per million), so the lock is waited for as long as
  // one may take, not the few seconds a write takes: every run and `results` command that opens
  // the file while another upgrades it would fail "database is locked" otherwise.
  if (version > 0) db->SetBusyTimeout(kUpgradeBusyTimeoutMs);
  auto wait = Transaction::Begin(db);
  db->SetBusyTimeout(sqlite::kBusyTimeoutMs);
  ASSIGN_OR_RETURN(Transaction transaction, std::move(wait));
  ASSIGN_OR_RETURN(version, db->QueryInt("PRAGMA user_version"));
  if (version == kResultsSchemaVersion) return transaction.Commit();
  if (version > kResultsSchemaVersion) return newer(version);
  if (version == 0) {
    ASSIGN_OR_RETURN(int64_t tables, db->QueryInt("SELECT COUNT(*) FROM sqlite_master"));
    if (tables > 0) {
      return absl::FailedPreconditionError(
          StrCat(db->path(), ": a SQLite database, but not a stormark results database"));
    }
    if (!create) return absl::NotFoundError(StrCat(db->path(), ": no results recorded yet"));
    RETURN_IF_ERROR(db->Exec(kSchema));
    RETURN_IF_ERROR(db->Exec(kSchemaV2));
    RETURN_IF_ERROR(db->Exec(kSchemaV3));
    RETURN_IF_ERROR(db->Exec(kSchemaV4));
    RETURN_IF_ERROR(db->Exec(kSchemaV5));
    RETURN_IF_ERROR(db->Exec(kSchemaV6));
    RETURN_IF_ERROR(db->Exec(kSchemaV7));
  } else {
    // 1 -> 2 -> ... -> 7: new tables and columns with defaults, tables rebuilt; every older row
    // stays.
    const std::string upgrading = StrCat(db->path(), ": upgrading the results schema ", version,
                                         " to ", kResultsSchemaVersion);
    if (note) {
      note(StrCat(upgrading,
                  ", once: every run recorded is kept (its series and histogram rows are copied, "
                  "seconds per million)"));
    }
    if (version < 2) RETURN_IF_ERROR(common::Annotate(db->Exec(kSchemaV2), upgrading));
    if (version < 3) RETURN_IF_ERROR(common::Annotate(db->Exec(kSchemaV3), upgrading));
    if (version < 4) RETURN_IF_ERROR(common::Annotate(db->Exec(kSchemaV4), upgrading));
    if (version < 5) RETURN_IF_ERROR(common::Annotate(db->Exec(kSchemaV5), upgrading));
    if (version < 6) RETURN_IF_ERROR(common::Annotate(db->Exec(kSchemaV6), upgrading));
    RETURN_IF_ERROR(common::Annotate(db->Exec(kSchemaV7), upgrading));
  }
  RETURN_IF_ERROR(db->Exec(StrCat("PRAGMA user_version = ", kResultsSchemaVersion)));
  return transaction.Commit();
}

}  // namespace stormark::controller
