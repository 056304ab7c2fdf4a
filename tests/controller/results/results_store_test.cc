#include "controller/results/results_store.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>
#include <vector>

#include "common/histogram.h"
#include "common/strings.h"
#include "controller/fleet/packed_series.h"
#include "controller/report/summary.h"
#include "controller/report/validity.h"
#include "controller/results/results_query.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

constexpr int64_t kMilli = 1'000'000;

// A loaded host's result with its series put back (LoadRun holds them packed), serialized.
std::string Whole(const HostOutcome& host) {
  stormark::v1::PhaseResult whole;
  const stormark::v1::PhaseResult* result = WithSeries(host, &whole);
  return result == nullptr ? "" : result->SerializeAsString();
}

// A fresh directory on disk for each test, removed afterwards.
class ResultsStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/var/tmp/stormark-store-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string PathOf(const std::string& name) const { return dir_ + "/" + name; }

  // Opens (creating) the store at `name`, failing the test when it cannot.
  std::unique_ptr<ResultsStore> OpenStore(const std::string& name = "results.db") {
    auto store = ResultsStore::Open(PathOf(name));
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Writes `run` as `stormark run` does: start, each phase, end (unless `status` is empty).
  static void Write(ResultsStore& store, const RunRecord& run, const std::string& status,
                    RunOwner owner = RunOwner::Self()) {
    RunStart start{"nightly", RunMode::kConcurrent, run.phases.size() + 1, std::move(owner)};
    ASSERT_TRUE(store.BeginRun(run, start).ok());
    for (size_t p = 0; p < run.phases.size(); ++p) {
      ASSERT_TRUE(store.BeginPhase(run.run_id, p, run.phases[p]).ok());
      ASSERT_TRUE(store.EndPhase(run.run_id, p, run.phases[p], /*written=*/{}).ok());
    }
    for (size_t i = 0; i < run.hooks.size(); ++i) {
      ASSERT_TRUE(store.AddHook(run.run_id, i, run.hooks[i]).ok());
    }
    for (size_t i = 0; i < run.skipped_points.size(); ++i) {
      ASSERT_TRUE(store.AddSkippedPoint(run.run_id, i, run.skipped_points[i]).ok());
    }
    if (!status.empty()) {
      ASSERT_TRUE(store.FinishRun(run, run.finished_unix_nanos, status).ok());
    }
  }

  // Two hosts; two repetitions at sweep point chunk=64k, in the second of which b is down;
  // b's first result carries bonnie-style measurements, resolved parameters and a warning.
  static RunRecord TwoHostRun(const std::string& run_id) {
    const SweepPoint sweep = {{"chunk", "64k"}, {"ra", "4096"}};
    HostOutcome b = SucceededHost("b:7420", 50, 4'000'000);
    auto* m = b.result->add_measurements();
    m->set_name("put_block");
    m->set_bytes(1 << 20);
    m->set_elapsed_nanos(kSecond);
    m->set_too_fast(true);
    common::LatencyHistogram latency;
    latency.Record(7000);
    latency.ToProto(m->mutable_latency());
    (*b.result->mutable_resolved())["seed"] = "42";
    b.result->add_warnings("size is under 2x RAM");
    return MakeRun(
        run_id, {"a:7420", "b:7420"},
        {Phase(WritePlan(), {SucceededHost("a:7420", 100), b}, 0, sweep),
         Phase(WritePlan(), {SucceededHost("a:7420", 110), UnreachableHost("b:7420")}, 1, sweep)});
  }

  std::string dir_;
};

TEST_F(ResultsStoreTest, RoundTripKeepsHostsRepetitionsSweepPointsAndRawResults) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const RunRecord run = TwoHostRun("r1");
  Write(*store, run, kRunCompleted);

  // A second connection, as `stormark results` would have.
  auto reader = ResultsStore::OpenExisting(PathOf("results.db"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto loaded = LoadRun(**reader, "r1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const RunRecord& got = loaded->record;

  EXPECT_EQ(loaded->listing.status, kRunCompleted);
  EXPECT_EQ(loaded->listing.label, "nightly");
  EXPECT_EQ(loaded->listing.planned_phases, 3u);
  EXPECT_EQ(loaded->listing.recorded_phases, 2u);
  EXPECT_THAT(loaded->listing.hosts, ElementsAre("a:7420", "b:7420"));
  EXPECT_EQ(got.started_unix_nanos, run.started_unix_nanos);
  EXPECT_EQ(got.finished_unix_nanos, run.finished_unix_nanos);
  EXPECT_FALSE(got.interrupted);

  ASSERT_EQ(got.agents.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(got.agents[i].host, run.agents[i].host);
    EXPECT_EQ(got.agents[i].info.SerializeAsString(), run.agents[i].info.SerializeAsString());
    EXPECT_EQ(got.agents[i].clock.offset_nanos, run.agents[i].clock.offset_nanos);
  }
  ASSERT_EQ(got.phases.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    const PhaseOutcome& want = run.phases[p];
    const PhaseOutcome& have = got.phases[p];
    EXPECT_EQ(have.plan.name, "seq-write");
    EXPECT_EQ(have.plan.repetition, static_cast<int>(p));
    EXPECT_EQ(have.plan.sweep_point, want.plan.sweep_point);
    EXPECT_EQ(have.plan.target, "scratch");
    EXPECT_EQ(have.plan.spec.SerializeAsString(), want.plan.spec.SerializeAsString());
    EXPECT_EQ(have.phase_id, want.phase_id);
    EXPECT_EQ(have.start_skew_nanos, want.start_skew_nanos);
    ASSERT_EQ(have.hosts.size(), 2u);
    for (size_t h = 0; h < 2; ++h) {
      EXPECT_EQ(have.hosts[h].host, want.hosts[h].host);
      EXPECT_EQ(have.hosts[h].error, want.hosts[h].error);
      EXPECT_EQ(have.hosts[h].clock.offset_nanos, want.hosts[h].clock.offset_nanos);
      ASSERT_EQ(have.hosts[h].result.has_value(), want.hosts[h].result.has_value());
      if (want.hosts[h].result) {
        // The series are held packed, apart from the result, and are all there.
        EXPECT_EQ(have.hosts[h].result->series_size(), 0);
        EXPECT_GT(want.hosts[h].result->series_size(), 0);
        EXPECT_FALSE(have.hosts[h].packed_series.empty());
        EXPECT_EQ(Whole(have.hosts[h]), want.hosts[h].result->SerializeAsString());
      }
    }
  }
}

// Two hosts 200 ms apart, each a second long, with series of ten uneven samples: what each did
// while both ran is not its pro rata share.
RunRecord StaggeredRun(const std::string& run_id) {
  std::vector<HostOutcome> hosts;
  for (int h = 0; h < 2; ++h) {
    HostOutcome host = SucceededHost(h == 0 ? "a:7420" : "b:7420", 100);
    stormark::v1::PhaseResult& r = *host.result;
    r.set_start_unix_nanos(r.start_unix_nanos() + h * 200 * kMilli);
    r.clear_series();
    uint64_t bytes = 0, ops = 0;
    for (int i = 0; i < 10; ++i) {
      auto* s = r.add_series();
      s->set_offset_nanos(i * 100 * kMilli);
      s->set_length_nanos(100 * kMilli);
      s->set_bytes(static_cast<uint64_t>(1 + i * (h + 1)) << 20);
      s->set_ops(1 + i);
      bytes += s->bytes();
      ops += s->ops();
    }
    r.set_bytes(bytes);
    r.set_ops(ops);
    hosts.push_back(std::move(host));
  }
  return MakeRun(run_id, {"a:7420", "b:7420"}, {Phase(WritePlan(), hosts)});
}

TEST_F(ResultsStoreTest, ARunReadWithoutItsSeriesHasTheSameWindowAndTheRestOfEachResult) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const RunRecord run = StaggeredRun("r1");
  Write(*store, run, kRunCompleted);
  auto packed = LoadRun(*store, "r1");
  ASSERT_TRUE(packed.ok()) << packed.status();
  auto bare = LoadRun(*store, "r1", SeriesKept::kNone);
  ASSERT_TRUE(bare.ok()) << bare.status();

  const PhaseValidity want = JudgeValidity(packed->record.phases[0]);
  const PhaseValidity got = JudgeValidity(bare->record.phases[0]);
  ASSERT_GT(want.window_nanos, 0);
  EXPECT_FALSE(want.window_estimated);
  EXPECT_EQ(got.window_nanos, want.window_nanos);
  EXPECT_EQ(got.window_bytes, want.window_bytes);
  EXPECT_EQ(got.window_ops, want.window_ops);
  EXPECT_FALSE(got.window_estimated);
  // Not the hosts' pro rata share: the samples are uneven.
  EXPECT_NE(
      got.window_bytes,
      (run.phases[0].hosts[0].result->bytes() + run.phases[0].hosts[1].result->bytes()) * 8 / 10);
  for (size_t h = 0; h < 2; ++h) {
    const HostOutcome& host = bare->record.phases[0].hosts[h];
    EXPECT_TRUE(host.packed_series.empty());
    EXPECT_FALSE(host.result_trimmed);  // Nothing to read back for the tables.
    // The result is whole but for its series.
    stormark::v1::PhaseResult without = *run.phases[0].hosts[h].result;
    without.clear_series();
    EXPECT_EQ(host.result->SerializeAsString(), without.SerializeAsString());
  }
}

TEST_F(ResultsStoreTest, QueryColumnsHoldTheFiguresAndTheHistogram) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Write(*store, TwoHostRun("r1"), kRunCompleted);
  auto row = store->db().Prepare(
      "SELECT status, bytes_per_second, ops_per_second, p99_nanos, latency_count, warnings, "
      "(SELECT SUM(count) FROM latency_buckets l WHERE l.run_id = h.run_id AND "
      "l.phase_index = h.phase_index AND l.host_index = h.host_index) "
      "FROM host_results h WHERE run_id = 'r1' AND phase_index = 0 AND host = 'b:7420'");
  ASSERT_TRUE(row.ok()) << row.status();
  ASSERT_TRUE(*row->Step());
  EXPECT_EQ(row->Text(0), "succeeded");
  EXPECT_DOUBLE_EQ(row->Double(1), 50.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(row->Double(2), 50.0);
  EXPECT_NEAR(static_cast<double>(row->Int(3)), 4e6, 4e6 * 0.01);
  EXPECT_EQ(row->Int(4), 50);
  EXPECT_EQ(row->Text(5), "size is under 2x RAM");
  EXPECT_EQ(row->Int(6), 50);  // The buckets add up to the count: percentiles recomputable.

  auto failed = store->db().QueryInt(
      "SELECT COUNT(*) FROM host_results WHERE status = 'error' AND result IS NULL");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(*failed, 1);
  for (const char* table : {"series", "measurements", "resolved", "sweep_values", "targets"}) {
    auto count = store->db().QueryInt(std::string("SELECT COUNT(*) FROM ") + table);
    ASSERT_TRUE(count.ok()) << table;
    EXPECT_GT(*count, 0) << table;
  }
}

TEST_F(ResultsStoreTest, SchemaVersionAndWalModeAreSet) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto version = store->db().QueryInt("PRAGMA user_version");
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, kResultsSchemaVersion);
  auto mode = store->db().Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.ok());
  ASSERT_TRUE(*mode->Step());
  EXPECT_EQ(mode->Text(0), "wal");
}

TEST_F(ResultsStoreTest, NewerSchemaIsRefusedWithItsVersion) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
  }
  auto raw = sqlite::Database::Open(PathOf("results.db"), false);
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE((*raw)->Exec("PRAGMA user_version = 99").ok());
  auto store = ResultsStore::Open(PathOf("results.db"));
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("newer stormark (results schema 99"));
}

TEST_F(ResultsStoreTest, RunLeftRunningByAGoneControllerReadsIncomplete) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  RunOwner gone = RunOwner::Self();
  gone.start_ticks += 1;  // Same pid, another process start: the writer is gone.
  RunRecord crashed = RepeatedRun("r-crashed", "local", {100});
  crashed.started_unix_nanos = kBase;
  Write(*store, crashed, "", gone);
  RunRecord live = RepeatedRun("r-live", "local", {100});
  live.started_unix_nanos = kBase + kSecond;
  Write(*store, live, "");

  auto runs = ListRuns(*store);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].run_id, "r-live");  // Newest first.
  EXPECT_EQ((*runs)[0].status, kRunRunning);
  EXPECT_EQ((*runs)[1].run_id, "r-crashed");
  EXPECT_EQ((*runs)[1].status, kRunIncomplete);
  EXPECT_EQ((*runs)[1].finished_unix_nanos, 0);
  // The phase it finished is there.
  auto loaded = LoadRun(*store, "r-crashed");
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->record.phases.size(), 1u);
  EXPECT_TRUE(loaded->record.phases[0].hosts[0].succeeded());
}

TEST_F(ResultsStoreTest, FileThatIsNotSqliteIsOneClearError) {
  const std::string path = PathOf("notes.txt");
  std::ofstream(path) << std::string(8192, 'x');
  for (const bool create : {true, false}) {
    auto store = create ? ResultsStore::Open(path) : ResultsStore::OpenExisting(path);
    ASSERT_FALSE(store.ok());
    EXPECT_THAT(store.status().message(), HasSubstr(path));
    EXPECT_THAT(store.status().message(), HasSubstr("not a database"));
  }
}

TEST_F(ResultsStoreTest, CorruptPagesAreAnErrorNotACrash) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 20; ++i) {
      Write(*store, TwoHostRun(common::StrCat("r", i)), kRunCompleted);
    }
  }  // Closing the last connection checkpoints the WAL into the file.
  const std::string path = PathOf("results.db");
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 16384u);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);  // Every page after the first (the header and schema stay intact).
    const std::string garbage(size - 4096, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto store = ResultsStore::OpenExisting(path);
  common::Status status = store.status();
  if (store.ok()) {
    auto runs = ListRuns(**store);
    status = runs.status();
    if (runs.ok() && !runs->empty()) status = LoadRun(**store, (*runs)[0].run_id).status();
  }
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr(path));
}

TEST_F(ResultsStoreTest, SqliteFileOfAnotherProgramIsRefused) {
  auto other = sqlite::Database::Open(PathOf("other.db"), true);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->Exec("CREATE TABLE photos (id INTEGER)").ok());
  auto store = ResultsStore::Open(PathOf("other.db"));
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("not a stormark results database"));
}

TEST_F(ResultsStoreTest, MissingDatabaseIsNotCreatedByReaders) {
  auto store = ResultsStore::OpenExisting(PathOf("none.db"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(store.status().message(), HasSubstr(PathOf("none.db")));
  EXPECT_FALSE(std::filesystem::exists(PathOf("none.db")));
}

TEST_F(ResultsStoreTest, OpenCreatesTheDirectory) {
  auto store = ResultsStore::Open(PathOf("a/b/results.db"));
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE(std::filesystem::exists(PathOf("a/b/results.db")));
}

TEST_F(ResultsStoreTest, RunIdIsResolvedFromLatestAPrefixOrTheWholeId) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  RunRecord first = RepeatedRun("r20260101-120000-aaaa", "local", {1});
  RunRecord second = RepeatedRun("r20260101-130000-bbbb", "local", {1});
  second.started_unix_nanos = first.started_unix_nanos + kSecond;
  Write(*store, first, kRunCompleted);
  Write(*store, second, kRunCompleted);

  EXPECT_EQ(*ResolveRun(*store, "latest"), "r20260101-130000-bbbb");
  EXPECT_EQ(*ResolveRun(*store, "r20260101-12"), "r20260101-120000-aaaa");
  EXPECT_EQ(*ResolveRun(*store, "r20260101-120000-aaaa"), "r20260101-120000-aaaa");

  auto ambiguous = ResolveRun(*store, "r20260101");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_THAT(ambiguous.status().message(), HasSubstr("ambiguous"));
  EXPECT_THAT(ambiguous.status().message(), HasSubstr("r20260101-130000-bbbb"));

  auto unknown = ResolveRun(*store, "r1999");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), HasSubstr("no run 'r1999'"));
}

TEST_F(ResultsStoreTest, LatestInAnEmptyStoreIsNotFound) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto latest = ResolveRun(*store, "latest");
  ASSERT_FALSE(latest.ok());
  EXPECT_THAT(latest.status().message(), HasSubstr("no runs recorded yet"));
}

TEST_F(ResultsStoreTest, SecondRunWithTheSameIdIsAnErrorNotAnOverwrite) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const RunRecord run = RepeatedRun("r1", "local", {1});
  Write(*store, run, kRunCompleted);
  RunStart start{"again", RunMode::kConcurrent, 1, RunOwner::Self()};
  EXPECT_FALSE(store->BeginRun(run, start).ok());
  auto loaded = LoadRun(*store, "r1");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->listing.label, "nightly");
}

// A run whose agents sent environment facts and whose first host is labelled.
RunRecord RunWithEnvironment(const std::string& run_id) {
  HostOutcome a = SucceededHost("a:7420", 100);
  (*a.result->mutable_host_environment())["vm.dirty_ratio"] = "20";
  (*a.result->mutable_target_environment())["read_ahead_kb"] = "4096";
  (*a.result->mutable_target_environment())["transport"] = "local";
  RunRecord run =
      MakeRun(run_id, {"a:7420", "b:7420"}, {Phase(WritePlan(), {a, SucceededHost("b:7420", 90)})});
  run.agents[0].labels = {{"transport", "aoe"}, {"rack", "r2"}};
  (*run.agents[0].info.mutable_environment())["cpu_governor"] = "none";
  (*run.agents[0].info.mutable_targets(0)->mutable_environment())["read_ahead_kb"] = "128";
  return run;
}

TEST_F(ResultsStoreTest, EnvironmentAndLabelsAreStoredAndLabelTheRowsAgain) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Write(*store, RunWithEnvironment("r1"), kRunCompleted);
  auto query = store->db().Prepare(
      "SELECT host_index, phase_index, scope, value FROM environment WHERE run_id = 'r1' AND "
      "key = 'read_ahead_kb' ORDER BY phase_index");
  ASSERT_TRUE(query.ok());
  ASSERT_TRUE(*query->Step());
  EXPECT_EQ(query->Int(1), -1);  // The start of the run.
  EXPECT_EQ(query->Text(2), "target:scratch");
  EXPECT_EQ(query->Text(3), "128");
  ASSERT_TRUE(*query->Step());
  EXPECT_EQ(query->Int(1), 0);  // The phase's own snapshot.
  EXPECT_EQ(query->Text(3), "4096");
  auto governor = store->db().QueryInt(
      "SELECT COUNT(*) FROM environment WHERE scope = 'host' AND key = 'cpu_governor' AND "
      "value = 'none' AND phase_index = -1");
  ASSERT_TRUE(governor.ok());
  EXPECT_EQ(*governor, 1);

  auto loaded = LoadRun(*store, "r1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->record.agents[0].labels,
              ElementsAre(std::pair<std::string, std::string>{"transport", "aoe"},
                          std::pair<std::string, std::string>{"rack", "r2"}));
  // The label wins over what the agent detected, and the disagreement is kept as a note.
  EXPECT_EQ(loaded->record.phases[0].hosts[0].transport, "AoE");
  EXPECT_THAT(loaded->record.phases[0].hosts[0].transport_note, HasSubstr("detected local"));
}

// What schema 3 added, taken away again: the file stormark wrote at version 2.
// What schema 6 added, taken away again.
constexpr char kDropVersion6[] =
    "ALTER TABLE phases DROP COLUMN start_lead_nanos; "
    "ALTER TABLE host_results DROP COLUMN clock_rtt_nanos; "
    "ALTER TABLE host_results DROP COLUMN clock_moved_nanos; ";

constexpr char kBackToVersion2[] =
    "DROP TABLE hook_failures; DROP TABLE hooks; DROP TABLE skipped_points; "
    "ALTER TABLE runs DROP COLUMN stopped; ALTER TABLE phases DROP COLUMN start_spread_limit; "
    "ALTER TABLE phases DROP COLUMN finished; PRAGMA user_version = 2";

TEST_F(ResultsStoreTest, Version1FileIsUpgradedAndItsRunsStayReadable) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    Write(*store, TwoHostRun("old"), kRunCompleted);
  }
  {
    // Make it the version 1 file an earlier stormark wrote: the same tables but the new ones.
    auto raw = sqlite::Database::Open(PathOf("results.db"), false);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE((*raw)->Exec(kDropVersion6).ok());
    ASSERT_TRUE((*raw)->Exec(kBackToVersion2).ok());
    ASSERT_TRUE(
        (*raw)->Exec("DROP TABLE labels; DROP TABLE environment; PRAGMA user_version = 1").ok());
  }
  auto reader = ResultsStore::OpenExisting(PathOf("results.db"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto version = (*reader)->db().QueryInt("PRAGMA user_version");
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, kResultsSchemaVersion);
  auto old = LoadRun(**reader, "old");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->record.phases.size(), 2u);
  EXPECT_TRUE(old->record.agents[0].labels.empty());

  auto writer = ResultsStore::Open(PathOf("results.db"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  Write(**writer, RunWithEnvironment("new"), kRunCompleted);
  auto rows = (*writer)->db().QueryInt("SELECT COUNT(*) FROM environment WHERE run_id = 'new'");
  ASSERT_TRUE(rows.ok());
  EXPECT_GT(*rows, 0);
  auto runs = ListRuns(**writer);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 2u);
}

TEST_F(ResultsStoreTest, EachPhaseKeepsItsStartSpreadLimitAndOldRunsGetTheDefault) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    Write(*store, TwoHostRun("old"), kRunCompleted);
    // The version 3 file an earlier stormark wrote: no limit column.
    auto raw = sqlite::Database::Open(PathOf("results.db"), false);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE((*raw)->Exec(kDropVersion6).ok());
    ASSERT_TRUE((*raw)
                    ->Exec("ALTER TABLE phases DROP COLUMN start_spread_limit; "
                           "ALTER TABLE phases DROP COLUMN finished; PRAGMA user_version = 3")
                    .ok());
  }
  auto writer = ResultsStore::Open(PathOf("results.db"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto old = LoadRun(**writer, "old");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_DOUBLE_EQ(old->record.phases[0].plan.start_spread_limit, 0.01);

  RunRecord run = TwoHostRun("new");
  run.phases[0].plan.start_spread_limit = 0.05;
  Write(**writer, run, kRunCompleted);
  auto loaded = LoadRun(**writer, "new");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_DOUBLE_EQ(loaded->record.phases[0].plan.start_spread_limit, 0.05);
  EXPECT_DOUBLE_EQ(loaded->record.phases[1].plan.start_spread_limit, 0.01);  // The default.
}

TEST_F(ResultsStoreTest, Version2FileIsUpgradedAndTheHooksOfNewRunsAreKept) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    Write(*store, TwoHostRun("old"), kRunCompleted);
    auto raw = sqlite::Database::Open(PathOf("results.db"), false);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE((*raw)->Exec(kDropVersion6).ok());
    ASSERT_TRUE((*raw)->Exec(kBackToVersion2).ok());
  }
  auto writer = ResultsStore::Open(PathOf("results.db"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  auto old = LoadRun(**writer, "old");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_TRUE(old->record.hooks.empty());

  RunRecord run = TwoHostRun("new");
  HookOutcome hook;
  hook.before_phase = 1;
  hook.what = "setup";
  hook.line = "mkfs.xfs -f /dev/x";
  hook.point = "agcount=4";
  hook.hosts = 2;
  hook.failures = {{"db2", "failed: command exited with status 1: bad ... usage"}};
  run.hooks = {hook};
  run.skipped_points = {{1, "agcount=4"}};
  run.stopped = "--fail-fast: stopped the run after host db2 failed";
  Write(**writer, run, kRunPartial);
  auto loaded = LoadRun(**writer, "new");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->record.hooks.size(), 1u);
  const HookOutcome& back = loaded->record.hooks[0];
  EXPECT_EQ(back.before_phase, 1u);
  EXPECT_EQ(back.line, hook.line);
  EXPECT_EQ(back.point, "agcount=4");
  EXPECT_EQ(back.hosts, 2u);
  EXPECT_EQ(back.failures, hook.failures);
  ASSERT_EQ(loaded->record.skipped_points.size(), 1u);
  EXPECT_EQ(loaded->record.skipped_points[0].point, "agcount=4");
  EXPECT_EQ(loaded->record.stopped, run.stopped);
  EXPECT_EQ(loaded->listing.status, kRunPartial);
}

// The phase of TwoHostRun as it was before it ran: plan, id and mode only.
PhaseOutcome Begun(const PhaseOutcome& phase) {
  PhaseOutcome begun;
  begun.plan = phase.plan;
  begun.phase_id = phase.phase_id;
  begun.mode = phase.mode;
  return begun;
}

TEST_F(ResultsStoreTest, APhaseWrittenHostByHostReadsAsOneWrittenWhole) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  RunRecord run = TwoHostRun("r1");
  run.phases.resize(1);
  ASSERT_TRUE(store->BeginRun(run, {"nightly", RunMode::kConcurrent, 1, RunOwner::Self()}).ok());
  PhaseOutcome& phase = run.phases[0];
  ASSERT_TRUE(store->BeginPhase("r1", 0, Begun(phase)).ok());
  // Host b's result came; a's was written at the end. The clocks moved at the end (the
  // bracket) after b's row was written.
  ASSERT_TRUE(store->AddHosts("r1", 0, {{1, phase.hosts[1]}}).ok());
  phase.hosts[1].clock.offset_nanos += 777;
  phase.hosts[1].clock.uncertainty_nanos = 4321;
  ASSERT_TRUE(store->EndPhase("r1", 0, phase, {0, 1}).ok());
  ASSERT_TRUE(store->FinishRun(run, run.finished_unix_nanos, kRunCompleted).ok());

  auto loaded = LoadRun(*store, "r1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->listing.recorded_phases, 1u);
  ASSERT_EQ(loaded->record.phases.size(), 1u);
  const PhaseOutcome& have = loaded->record.phases[0];
  EXPECT_EQ(have.start_at_unix_nanos, phase.start_at_unix_nanos);
  EXPECT_EQ(have.start_skew_nanos, phase.start_skew_nanos);
  ASSERT_EQ(have.hosts.size(), 2u);
  for (size_t h = 0; h < 2; ++h) {
    EXPECT_EQ(have.hosts[h].host, phase.hosts[h].host);
    EXPECT_EQ(have.hosts[h].clock.offset_nanos, phase.hosts[h].clock.offset_nanos) << h;
    EXPECT_EQ(have.hosts[h].clock.uncertainty_nanos, phase.hosts[h].clock.uncertainty_nanos) << h;
    EXPECT_EQ(Whole(have.hosts[h]), phase.hosts[h].result->SerializeAsString());
  }
  auto measurements = store->db().QueryInt("SELECT COUNT(*) FROM measurements");
  ASSERT_TRUE(measurements.ok());
  EXPECT_EQ(*measurements, 1);  // b's, written once.
}

TEST_F(ResultsStoreTest, APhaseCutOffByItsControllerKeepsTheResultsThatHadArrived) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  RunRecord run = TwoHostRun("r1");
  RunOwner gone = RunOwner::Self();
  gone.start_ticks += 1;  // The controller died during the second phase.
  ASSERT_TRUE(store->BeginRun(run, {"nightly", RunMode::kConcurrent, 2, gone}).ok());
  ASSERT_TRUE(store->BeginPhase("r1", 0, run.phases[0]).ok());
  ASSERT_TRUE(store->EndPhase("r1", 0, run.phases[0], /*written=*/{}).ok());
  ASSERT_TRUE(store->BeginPhase("r1", 1, Begun(run.phases[1])).ok());
  ASSERT_TRUE(store->AddHosts("r1", 1, {{0, run.phases[1].hosts[0]}}).ok());

  auto reader = ResultsStore::OpenExisting(PathOf("results.db"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto loaded = LoadRun(**reader, "r1");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->listing.status, kRunIncomplete);
  EXPECT_EQ(loaded->listing.recorded_phases, 1u);  // The one that ended.
  ASSERT_EQ(loaded->record.phases.size(), 2u);
  const PhaseOutcome& cut = loaded->record.phases[1];
  EXPECT_EQ(cut.start_at_unix_nanos, 0);
  EXPECT_FALSE(cut.start_skew_nanos.has_value());
  ASSERT_EQ(cut.hosts.size(), 2u);
  ASSERT_TRUE(cut.hosts[0].result.has_value());
  EXPECT_EQ(Whole(cut.hosts[0]), run.phases[1].hosts[0].result->SerializeAsString());
  EXPECT_EQ(cut.hosts[1].host, "b:7420");
  EXPECT_EQ(cut.hosts[1].target, "scratch");
  EXPECT_FALSE(cut.hosts[1].result.has_value());
  EXPECT_EQ(cut.hosts[1].error, kNoResultRecorded);
  // Its "all hosts" figure is a's alone, and says so (report/validity.h).
  EXPECT_TRUE(loaded->record.phases[0].ended);
  EXPECT_FALSE(cut.ended);
  const PhaseSummary summary = Summarize(cut);
  ASSERT_TRUE(summary.all_hosts.has_value());
  EXPECT_TRUE(summary.all_hosts->invalid);
  EXPECT_THAT(summary.validity.why, HasSubstr("1 of 2 hosts had reported"));

  // A host the run could not use has no row either, and says why rather than "no result".
  RunRecord other = TwoHostRun("r2");
  other.agents[1].error = "host b:7420: unreachable: connection refused";
  ASSERT_TRUE(store->BeginRun(other, {"nightly", RunMode::kConcurrent, 1, gone}).ok());
  ASSERT_TRUE(store->BeginPhase("r2", 0, Begun(other.phases[0])).ok());
  auto second = LoadRun(*store, "r2");
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->record.phases[0].hosts.size(), 2u);
  EXPECT_EQ(second->record.phases[0].hosts[0].error, kNoResultRecorded);
  EXPECT_EQ(second->record.phases[0].hosts[1].error, other.agents[1].error);
}

TEST_F(ResultsStoreTest, AStoredRowOfAHostTheRunHasNotIsRefusedNotShownAsOneMore) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  Write(*store, TwoHostRun("r1"), kRunCompleted);
  // An edited file: host 0's row copied to index 7 of a two-host run.
  ASSERT_TRUE(
      store->db()
          .Prepare(
              "INSERT INTO host_results SELECT run_id, phase_index, 7, host, target, "
              "status, error, bytes, ops, elapsed_seconds, bytes_per_second, "
              "ops_per_second, cpu_percent, latency_count, latency_sum_nanos, "
              "latency_min_nanos, p50_nanos, p99_nanos, max_nanos, "
              "start_unix_nanos, end_unix_nanos, start_late_nanos, "
              "clock_offset_nanos, clock_uncertainty_nanos, warnings, result, clock_rtt_nanos, "
              "clock_moved_nanos FROM "
              "host_results WHERE phase_index = 0 AND host_index = 0")
          ->Run()
          .ok());
  auto loaded = LoadRun(*store, "r1");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("run r1 phase 1 has a result of host 7, which the run has not"));

  // A finished phase that lost a host's row is damaged too.
  auto store2 = OpenStore("other.db");
  ASSERT_NE(store2, nullptr);
  Write(*store2, TwoHostRun("r2"), kRunCompleted);
  ASSERT_TRUE(store2->db()
                  .Prepare("DELETE FROM host_results WHERE phase_index = 1 AND host_index = 1")
                  ->Run()
                  .ok());
  auto damaged = LoadRun(*store2, "r2");
  ASSERT_FALSE(damaged.ok());
  EXPECT_THAT(damaged.status().message(), HasSubstr("phase 2 ended without a row for host 1"));
}

// A file recorded before the controller checked results as they came (or edited since) holds
// a figure no run can produce: read back, that host's result is a failure naming the field, in
// every view, and the other host's figures are the phase's.
TEST_F(ResultsStoreTest, AStoredResultNoRunCanProduceIsThatHostsFailureAndTheOthersStand) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  RunRecord run =
      MakeRun("r1", {"a:7420", "b:7420"},
              {Phase(WritePlan(), {SucceededHost("a:7420", 100), SucceededHost("b:7420", 100)})});
  run.phases[0].hosts[1].result->set_elapsed_nanos(std::numeric_limits<int64_t>::max());
  Write(*store, run, kRunCompleted);
  // And one left running by its controller: bounded by the file's last write instead.
  run.run_id = "r2";
  Write(*store, run, "");
  for (const std::string id : {"r1", "r2"}) {
    for (const SeriesKept kept : {SeriesKept::kPacked, SeriesKept::kNone}) {
      SCOPED_TRACE(id);
      auto loaded = LoadRun(*store, id, kept);
      ASSERT_TRUE(loaded.ok()) << loaded.status();
      const PhaseOutcome& phase = loaded->record.phases[0];
      EXPECT_TRUE(phase.hosts[0].succeeded());
      EXPECT_FALSE(phase.hosts[1].succeeded());
      EXPECT_FALSE(phase.hosts[1].result.has_value());
      EXPECT_THAT(phase.hosts[1].error,
                  HasSubstr(id == "r1" ? "the stored result is not plausible: elapsed_nanos is "
                                         "9223372036854775807: longer than the 10.000 s the run "
                                         "lasted"
                                       : "from the run's start to the last write of its "
                                         "results file"));
      const PhaseSummary summary = Summarize(phase);
      ASSERT_TRUE(summary.all_hosts.has_value());
      EXPECT_EQ(summary.all_hosts->hosts, 1);
      EXPECT_EQ(summary.failed, 1);
    }
  }
  // The run's own times edited to the ends of int64: read, not overflowed.
  ASSERT_TRUE(store->db()
                  .Prepare("UPDATE runs SET started_unix_nanos = -9223372036854775808, "
                           "finished_unix_nanos = 9223372036854775807 WHERE run_id = 'r1'")
                  ->Run()
                  .ok());
  auto edited = LoadRun(*store, "r1");
  ASSERT_TRUE(edited.ok()) << edited.status();
  EXPECT_TRUE(edited->record.phases[0].hosts[0].succeeded());
  EXPECT_THAT(edited->record.phases[0].hosts[1].error,
              HasSubstr("the stored result is not plausible: elapsed_nanos is "
                        "9223372036854775807"));
}

TEST_F(ResultsStoreTest, ControllersOpeningANewOrAnOlderFileAtOnceAllGetIt) {
  // Two runs started at once on a file that does not exist yet, or on one of an older schema:
  // the second to look must wait for the first's schema, not refuse the file as another
  // program's or fail adding a column twice.
  for (int attempt = 0; attempt < 20; ++attempt) {
    const std::string name = common::StrCat("race-", attempt, ".db");
    if (attempt % 2 == 1) {
      auto store = OpenStore(name);
      ASSERT_NE(store, nullptr);
      for (const char* drop : {"ALTER TABLE phases DROP COLUMN start_lead_nanos",
                               "ALTER TABLE host_results DROP COLUMN clock_rtt_nanos",
                               "ALTER TABLE host_results DROP COLUMN clock_moved_nanos"}) {
        ASSERT_TRUE(store->db().Prepare(drop)->Run().ok());
      }
      ASSERT_TRUE(store->db().Prepare("ALTER TABLE phases DROP COLUMN finished")->Run().ok());
      ASSERT_TRUE(store->db().Prepare("PRAGMA user_version = 4")->Run().ok());
    }
    std::vector<common::Status> statuses(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < statuses.size(); ++t) {
      threads.emplace_back([&, t] { statuses[t] = ResultsStore::Open(PathOf(name)).status(); });
    }
    for (std::thread& t : threads) t.join();
    for (const common::Status& status : statuses) EXPECT_TRUE(status.ok()) << attempt << status;
  }
}

TEST_F(ResultsStoreTest, Version4FileIsUpgradedAndItsPhasesReadAsFinished) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    Write(*store, TwoHostRun("old"), kRunCompleted);
    auto raw = sqlite::Database::Open(PathOf("results.db"), false);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE((*raw)->Exec(kDropVersion6).ok());
    ASSERT_TRUE(
        (*raw)->Exec("ALTER TABLE phases DROP COLUMN finished; PRAGMA user_version = 4").ok());
  }
  auto reader = ResultsStore::OpenExisting(PathOf("results.db"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto old = LoadRun(**reader, "old");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->listing.recorded_phases, 2u);
  ASSERT_EQ(old->record.phases.size(), 2u);
  EXPECT_EQ(old->record.phases[1].hosts[1].error, "host b:7420: unreachable: connection refused");
}

// The tables of a row per sample and per bucket as an earlier stormark kept them: a rowid table
// beside its primary key's index.
constexpr char kBackToVersion6[] =
    "CREATE TABLE series_v6 (run_id TEXT NOT NULL, phase_index INTEGER NOT NULL, "
    "host_index INTEGER NOT NULL, offset_nanos INTEGER NOT NULL, length_nanos INTEGER NOT NULL, "
    "bytes INTEGER NOT NULL, ops INTEGER NOT NULL, "
    "PRIMARY KEY (run_id, phase_index, host_index, offset_nanos)); "
    "INSERT INTO series_v6 SELECT * FROM series; DROP TABLE series; "
    "ALTER TABLE series_v6 RENAME TO series; "
    "CREATE TABLE latency_buckets_v6 (run_id TEXT NOT NULL, phase_index INTEGER NOT NULL, "
    "host_index INTEGER NOT NULL, sub_bucket_bits INTEGER NOT NULL, "
    "bucket_index INTEGER NOT NULL, lower_bound_nanos INTEGER NOT NULL, "
    "width_nanos INTEGER NOT NULL, count INTEGER NOT NULL, "
    "PRIMARY KEY (run_id, phase_index, host_index, bucket_index)); "
    "INSERT INTO latency_buckets_v6 SELECT * FROM latency_buckets; DROP TABLE latency_buckets; "
    "ALTER TABLE latency_buckets_v6 RENAME TO latency_buckets; PRAGMA user_version = 6";

TEST_F(ResultsStoreTest, Version6FileIsUpgradedToTablesWithoutRowidAndKeepsEveryRow) {
  int64_t samples = 0, buckets = 0;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    Write(*store, TwoHostRun("old"), kRunCompleted);
    auto raw = sqlite::Database::Open(PathOf("results.db"), false);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE((*raw)->Exec(kBackToVersion6).ok());
    samples = *(*raw)->QueryInt("SELECT COUNT(*) FROM series");
    buckets = *(*raw)->QueryInt("SELECT COUNT(*) FROM latency_buckets");
    ASSERT_GT(samples, 0);
    ASSERT_GT(buckets, 0);
    EXPECT_EQ(*(*raw)->QueryInt("SELECT COUNT(*) FROM sqlite_master WHERE sql LIKE "
                                "'%WITHOUT ROWID%'"),
              0);
  }
  // The one line said before an upgrade, which can take a while; none for a current file.
  std::vector<std::string> notes;
  const SchemaNote note = [&notes](std::string_view line) { notes.emplace_back(line); };
  auto writer = ResultsStore::Open(PathOf("results.db"), note);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_THAT(notes, ElementsAre(PathOf("results.db") +
                                 ": upgrading the results schema 6 to 7, once: every run recorded "
                                 "is kept (its series and histogram rows are copied, seconds per "
                                 "million)"));
  ASSERT_TRUE(ResultsStore::OpenExisting(PathOf("results.db"), note).ok());
  EXPECT_EQ(notes.size(), 1u);
  const sqlite::Database& db = (*writer)->db();
  EXPECT_EQ(*db.QueryInt("PRAGMA user_version"), kResultsSchemaVersion);
  EXPECT_EQ(*db.QueryInt("SELECT COUNT(*) FROM sqlite_master WHERE name IN ('series', "
                         "'latency_buckets') AND sql LIKE '%WITHOUT ROWID'"),
            2);
  // No index beside them any more; every row is still there, and the run reads as it did.
  EXPECT_EQ(*db.QueryInt("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name "
                         "IN ('series', 'latency_buckets')"),
            0);
  EXPECT_EQ(*db.QueryInt("SELECT COUNT(*) FROM series"), samples);
  EXPECT_EQ(*db.QueryInt("SELECT COUNT(*) FROM latency_buckets"), buckets);
  auto old = LoadRun(**writer, "old");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(Whole(old->record.phases[0].hosts[0]),
            TwoHostRun("old").phases[0].hosts[0].result->SerializeAsString());
  // New rows go into the new tables, and a run deleted takes its rows with it.
  Write(**writer, TwoHostRun("new"), kRunCompleted);
  EXPECT_EQ(*db.QueryInt("SELECT COUNT(*) FROM series"), 2 * samples);
  auto raw = sqlite::Database::Open(PathOf("results.db"), false);
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(
      (*raw)->Exec("PRAGMA foreign_keys = ON; DELETE FROM host_results WHERE run_id = 'old'").ok());
  EXPECT_EQ(*db.QueryInt("SELECT COUNT(*) FROM series"), samples);
  EXPECT_EQ(*db.QueryInt("SELECT COUNT(*) FROM latency_buckets"), buckets);
}

// Another process holding the write lock of a file of an older schema may be upgrading it,
// which takes seconds per million rows: opening it waits, instead of failing "database is
// locked" after the few seconds a write takes (kBusyTimeoutMs).
TEST_F(ResultsStoreTest, AFileBeingUpgradedElsewhereIsWaitedForNotRefused) {
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    Write(*store, TwoHostRun("old"), kRunCompleted);
  }
  auto other = sqlite::Database::Open(PathOf("results.db"), false);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE((*other)->Exec(kBackToVersion6).ok());
  ASSERT_TRUE((*other)->Exec("BEGIN IMMEDIATE").ok());  // The other upgrade, under way.
  const auto held = std::chrono::milliseconds(sqlite::kBusyTimeoutMs + 1500);
  std::thread upgrader([&] {
    std::this_thread::sleep_for(held);
    ASSERT_TRUE((*other)
                    ->Exec(std::string("PRAGMA user_version = ") +
                           std::to_string(kResultsSchemaVersion) + "; COMMIT")
                    .ok());
  });
  const auto start = std::chrono::steady_clock::now();
  auto reader = ResultsStore::OpenExisting(PathOf("results.db"));
  const auto waited = std::chrono::steady_clock::now() - start;
  upgrader.join();
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_GE(waited, held - std::chrono::milliseconds(200));
  auto old = LoadRun(**reader, "old");
  EXPECT_TRUE(old.ok()) << old.status();
}

// The JSON report's clock figures and start lead are kept, so that an export gives what the
// run's own report gave; a version 5 file's rows read 0.
TEST_F(ResultsStoreTest, ClockFiguresAndTheStartLeadAreKeptAndOlderRowsReadZero) {
  RunRecord run = TwoHostRun("clocks");
  run.phases[0].start_lead_nanos = 251'000'000;
  run.phases[0].hosts[0].clock.rtt_nanos = 163'000;
  run.phases[0].hosts[0].clock.moved_nanos = -18'000;
  {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    Write(*store, run, kRunCompleted);
    auto loaded = LoadRun(*store, "clocks");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->record.phases[0].start_lead_nanos, 251'000'000);
    EXPECT_EQ(loaded->record.phases[0].hosts[0].clock.rtt_nanos, 163'000);
    EXPECT_EQ(loaded->record.phases[0].hosts[0].clock.moved_nanos, -18'000);
    auto raw = sqlite::Database::Open(PathOf("results.db"), false);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE((*raw)->Exec(std::string(kDropVersion6) + "PRAGMA user_version = 5").ok());
  }
  auto reader = ResultsStore::OpenExisting(PathOf("results.db"));
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto old = LoadRun(**reader, "clocks");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->record.phases[0].start_lead_nanos, 0);
  EXPECT_EQ(old->record.phases[0].hosts[0].clock.rtt_nanos, 0);
  EXPECT_EQ(old->record.phases[0].hosts[0].clock.offset_nanos,
            run.phases[0].hosts[0].clock.offset_nanos);
}

}  // namespace
}  // namespace stormark::controller
