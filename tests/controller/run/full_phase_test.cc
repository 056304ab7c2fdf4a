#include "controller/run/full_phase.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <google/protobuf/util/message_differencer.h>

#include "common/histogram.h"
#include "controller/fio/fio_json.h"
#include "controller/fio/fio_logs.h"
#include "controller/report/report_baseline.h"
#include "controller/report/report_export.h"
#include "controller/report/report_json.h"
#include "controller/report/report_table.h"
#include "controller/report/run_status.h"
#include "controller/report/summary.h"
#include "controller/report/sweep_table.h"
#include "controller/results/results_query.h"
#include "controller/results/run_journal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using common::Status;
using google::protobuf::util::MessageDifferencer;
using stormark::v1::Measurement;
using stormark::v1::PhaseResult;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

// Adds a measurement `name` of `ops` operations over `seconds` one-second intervals, with a
// spread of latencies, as randio's read and write and bonnie's tests carry them.
void AddMeasurement(PhaseResult* r, const std::string& name, uint64_t ops, int seconds) {
  Measurement* m = r->add_measurements();
  m->set_name(name);
  m->set_ops(ops);
  m->set_bytes(ops * 4096);
  m->set_elapsed_nanos(seconds * kSecond);
  m->set_cpu_user_nanos(kSecond / 10);
  common::LatencyHistogram latency;
  for (uint64_t k = 0; k < 500; ++k) latency.Record(1000 + (k * 7919) % 90'000);
  latency.ToProto(m->mutable_latency());
  for (int s = 0; s < seconds; ++s) {
    auto* sample = m->add_series();
    sample->set_offset_nanos(s * kSecond);
    sample->set_length_nanos(kSecond);
    sample->set_ops(ops / seconds);
    sample->set_bytes(ops / seconds * 4096);
    sample->set_latency_sum_nanos(ops / seconds * 20'000);
  }
}

// A host's result with everything an agent sends: a series a second, measurements, a job's
// own figures, a thread's, environments, resolved settings, tuning, device counters, a
// verification, the cache report and stonewall figures.
HostOutcome RichHost(const std::string& host, uint64_t mibps, int seconds, const char* kernel) {
  HostOutcome h = SucceededHost(host, mibps, 30'000 + mibps);
  PhaseResult& r = *h.result;
  r.set_elapsed_nanos(seconds * kSecond);
  r.set_end_unix_nanos(r.start_unix_nanos() + seconds * kSecond);
  r.set_bytes(r.bytes() * static_cast<uint64_t>(seconds));
  r.set_ops(r.ops() * static_cast<uint64_t>(seconds));
  r.clear_series();
  for (int s = 0; s < seconds; ++s) {
    auto* sample = r.add_series();
    sample->set_offset_nanos(s * kSecond);
    sample->set_length_nanos(kSecond);
    sample->set_bytes(r.bytes() / static_cast<uint64_t>(seconds));
    sample->set_ops(r.ops() / static_cast<uint64_t>(seconds));
  }
  AddMeasurement(&r, "read", 3000, seconds);
  AddMeasurement(&r, "write", 1000, seconds);
  auto* job = r.add_jobs();
  job->set_name("mix");
  *job->add_measurements() = r.measurements(0);
  auto* thread = r.add_threads();
  thread->set_name("thread 0");
  *thread->add_measurements() = r.measurements(1);
  (*r.mutable_host_environment())["kernel"] = kernel;
  (*r.mutable_host_environment())["cpu_governor"] = "performance";
  (*r.mutable_target_environment())["scheduler"] = "mq-deadline";
  (*r.mutable_resolved())["seed"] = "42";
  (*r.mutable_tuning())["read_ahead_kb"] = "4096";
  (*r.mutable_device_stats())["disk.reads"] = "1234";
  r.mutable_verify()->set_units_checked(16);
  r.mutable_cache()->set_synced(true);
  r.set_first_done_nanos(kSecond / 2);
  r.set_first_done_bytes(r.bytes() / 2);
  r.set_first_done_ops(r.ops() / 2);
  r.set_last_done_nanos(seconds * kSecond);
  r.add_warnings("size is under 2x RAM");
  return h;
}

// A randio plan that writes fio's logs, as an imported job file with write_iops_log has it.
PhasePlan LoggedPlan(const std::string& name) {
  PhasePlan plan = WritePlan(name);
  plan.spec.mutable_randio()->set_rw(stormark::v1::RandioSpec::RANDRW);
  PhasePlan::FioLog log;
  log.job = name;
  log.iops = name + "-log";
  log.bw = name + "-log";
  plan.fio_logs.push_back(log);
  return plan;
}

// A bonnie phase: its CSV line is made of its measurements and resolved settings.
PhasePlan BonniePlan() {
  PhasePlan plan = WritePlan("bon");
  plan.spec.mutable_bonnie()->set_size_bytes(uint64_t{1} << 30);
  return plan;
}

// Three hosts, two sweep points, two repetitions each of a logged randio phase and a bonnie
// phase; one host unreachable in one of them and another with an older kernel.
RunRecord RichRun() {
  std::vector<PhaseOutcome> phases;
  for (const char* qd : {"1", "32"}) {
    for (int rep = 0; rep < 2; ++rep) {
      const SweepPoint point = {{"iodepth", qd}};
      phases.push_back(
          Phase(LoggedPlan("mix"),
                {RichHost("a", 100 + rep, 6, "6.1.0"), RichHost("b", 80 + rep, 6, "5.10.0"),
                 rep == 1 ? UnreachableHost("c") : RichHost("c", 90, 6, "6.1.0")},
                rep, point));
      phases.push_back(Phase(BonniePlan(),
                             {RichHost("a", 50, 3, "6.1.0"), RichHost("b", 40, 3, "5.10.0"),
                              RichHost("c", 45, 3, "6.1.0")},
                             rep, point));
    }
  }
  for (size_t p = 0; p < phases.size(); ++p) phases[p].phase_id = "r-" + std::to_string(p + 1);
  return MakeRun("r20261207-050000-abcd", {"a", "b", "c"}, std::move(phases));
}

// A results database in a fresh directory, removed afterwards, with `run` recorded in it as
// `stormark run` records it: each host's row through the journal's writer, then the phase's end.
class FullPhaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/var/tmp/stormark-full-phase-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    err_ = std::tmpfile();
    ASSERT_NE(err_, nullptr);
  }
  void TearDown() override {
    journal_.reset();
    std::filesystem::remove_all(dir_);
    if (err_ != nullptr) std::fclose(err_);
  }

  // Records `run` and returns its phases as the fleet and the journal leave them: each host
  // handed on has its series dropped.
  std::vector<PhaseOutcome> Record(const RunRecord& run) {
    auto store = ResultsStore::Open(dir_ + "/results.db");
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return {};
    journal_ = std::make_unique<RunJournal>(std::move(*store), err_);
    journal_->Begin(run, {"test", RunMode::kConcurrent, run.phases.size(), RunOwner::Self()});
    std::vector<PhaseOutcome> left;
    for (size_t p = 0; p < run.phases.size(); ++p) {
      PhaseOutcome phase = run.phases[p];
      journal_->BeginPhase(run.run_id, p, phase, run.agents.size());
      if (auto done = journal_->host_done()) {
        for (size_t h = 0; h < phase.hosts.size(); ++h) done(h, &phase.hosts[h]);
      }
      journal_->EndPhase(run.run_id, p, &phase);
      const Status shared = journal_->ShareWindow(run.run_id, p, &phase);
      EXPECT_TRUE(shared.ok()) << shared;
      left.push_back(std::move(phase));
    }
    EXPECT_TRUE(journal_->healthy());
    return left;
  }

  // `run` with every phase cut to its summaries, reading them back through the journal.
  RunRecord Cut(RunRecord run) {
    run.read_back = [this, id = run.run_id, hosts = run.agents.size()](
                        size_t index, std::vector<std::string>* packed_series) {
      return journal_->ReadBack(id, index, hosts, packed_series);
    };
    for (size_t p = 0; p < run.phases.size(); ++p) CutPhaseToSummaries(&run, p);
    return run;
  }

  std::string dir_;
  std::FILE* err_ = nullptr;
  std::unique_ptr<RunJournal> journal_;
};

TEST(CutToSummary, KeepsWhatTheSummaryRowReadsAndDropsTheRest) {
  const HostOutcome whole = RichHost("a", 100, 60, "6.1.0");
  HostOutcome cut = whole;
  CutToSummary(&*cut.result);

  const RowSummary before = SummarizeHost(whole), after = SummarizeHost(cut);
  EXPECT_EQ(after.status, before.status);
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(after.ops, before.ops);
  EXPECT_EQ(after.elapsed_seconds, before.elapsed_seconds);
  EXPECT_EQ(after.bytes_per_second, before.bytes_per_second);
  EXPECT_EQ(after.cpu_percent, before.cpu_percent);
  EXPECT_EQ(after.warnings, before.warnings);
  EXPECT_EQ(after.latency.count(), before.latency.count());
  EXPECT_EQ(after.latency.Percentile(99), before.latency.Percentile(99));
  EXPECT_EQ(cut.result->start_unix_nanos(), whole.result->start_unix_nanos());
  EXPECT_EQ(cut.result->last_done_nanos(), whole.result->last_done_nanos());

  EXPECT_THAT(cut.result->series(), IsEmpty());
  EXPECT_THAT(cut.result->measurements(), IsEmpty());
  EXPECT_THAT(cut.result->jobs(), IsEmpty());
  EXPECT_THAT(cut.result->threads(), IsEmpty());
  EXPECT_TRUE(cut.result->host_environment().empty());
  EXPECT_TRUE(cut.result->resolved().empty());
  // A minute's phase: the summary is a small part of the whole.
  EXPECT_LT(cut.result->SpaceUsedLong() * 8, whole.result->SpaceUsedLong())
      << cut.result->SpaceUsedLong() << " of " << whole.result->SpaceUsedLong();
}

TEST(CutToSummary, AFailedHostKeepsItsErrorAndAStuckWorker) {
  HostOutcome host = RichHost("a", 1, 2, "6.1.0");
  host.result->set_state(PhaseResult::FAILED);
  host.result->set_error("pwrite: Input/output error");
  host.result->set_stuck_worker("pread64 on /dev/dm-3 for 12 s");
  CutToSummary(&*host.result);
  EXPECT_EQ(host.result->state(), PhaseResult::FAILED);
  EXPECT_EQ(host.result->error(), "pwrite: Input/output error");
  EXPECT_EQ(host.result->stuck_worker(), "pread64 on /dev/dm-3 for 12 s");
}

// The point of the cut: every output `stormark run` writes at its end is the same, byte for
// byte, from phases cut to their summaries (and read back) as from the whole results.
TEST_F(FullPhaseTest, EveryOutputAtTheRunsEndIsTheSameFromPhasesCutToTheirSummaries) {
  const RunRecord whole = RichRun();
  Record(whole);
  const RunRecord cut = Cut(whole);
  for (const PhaseOutcome& phase : cut.phases) {
    for (const HostOutcome& host : phase.hosts) {
      if (host.result) {
        ASSERT_THAT(host.result->series(), IsEmpty());
      }
    }
  }

  Status read_back;
  const std::string json = RunJsonText(cut, &read_back);
  EXPECT_TRUE(read_back.ok()) << read_back;
  EXPECT_EQ(json, RunJsonText(whole));
  EXPECT_THAT(json, HasSubstr("\"kernel\": \"5.10.0\""));  // Not vacuous: details are in it.
  EXPECT_EQ(RunToJson(cut), RunToJson(whole));

  EXPECT_EQ(fio::FioJson(cut, /*plus=*/true, &read_back).dump(), fio::FioJson(whole, true).dump());
  EXPECT_TRUE(read_back.ok()) << read_back;

  const std::vector<fio::FioLogFile> logs = fio::FioLogs(cut, &read_back),
                                     want = fio::FioLogs(whole);
  EXPECT_TRUE(read_back.ok()) << read_back;
  ASSERT_EQ(logs.size(), want.size());
  ASSERT_FALSE(logs.empty());
  for (size_t i = 0; i < logs.size(); ++i) {
    EXPECT_EQ(logs[i].path, want[i].path);
    EXPECT_EQ(logs[i].text, want[i].text);
    EXPECT_FALSE(logs[i].text.empty()) << logs[i].path;
  }

  const std::string bonnie = RunBonnieCsv(cut, &read_back);
  EXPECT_TRUE(read_back.ok()) << read_back;
  EXPECT_EQ(bonnie, RunBonnieCsv(whole));
  EXPECT_THAT(bonnie, HasSubstr(",a,"));

  const std::string sweep = SweepSummaryTable(cut, 2);
  EXPECT_EQ(sweep, SweepSummaryTable(whole, 2));
  EXPECT_THAT(sweep, HasSubstr("kernel"));  // The hosts' environments differ, and it says so.

  auto baseline = FormatBaselineTables(cut, "a");
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  EXPECT_EQ(*baseline, *FormatBaselineTables(whole, "a"));
  EXPECT_EQ(FormatRunStatus(StatusOf(cut)), FormatRunStatus(StatusOf(whole)));
  for (size_t p = 0; p < whole.phases.size(); ++p) {
    const PhaseSummary a = Summarize(cut.phases[p]), b = Summarize(whole.phases[p]);
    ASSERT_TRUE(a.all_hosts.has_value());
    EXPECT_EQ(a.all_hosts->bytes_per_second, b.all_hosts->bytes_per_second);
    EXPECT_EQ(a.all_hosts->latency.Percentile(99), b.all_hosts->latency.Percentile(99));
    EXPECT_EQ(a.validity.invalid(), b.validity.invalid());
    EXPECT_EQ(a.validity.why, b.validity.why);
  }
}

// As `stormark run` holds a phase from its results' arrival to its table: every series of
// the results is gone from memory, and the phase read back is whole again.
TEST_F(FullPhaseTest, EachResultHandedToTheDatabaseLosesItsSeriesAndReadsBackWhole) {
  const RunRecord whole = RichRun();
  const std::vector<PhaseOutcome> left = Record(whole);
  ASSERT_EQ(left.size(), whole.phases.size());
  RunRecord run = whole;
  run.phases = left;
  run.read_back = [this, id = run.run_id, hosts = run.agents.size()](
                      size_t index, std::vector<std::string>* packed_series) {
    return journal_->ReadBack(id, index, hosts, packed_series);
  };
  for (size_t p = 0; p < run.phases.size(); ++p) {
    for (const HostOutcome& host : run.phases[p].hosts) {
      if (!host.result) continue;
      EXPECT_TRUE(host.result_trimmed);
      EXPECT_THAT(host.result->threads(), IsEmpty());
      for (const auto& m : host.result->measurements()) EXPECT_THAT(m.series(), IsEmpty());
      for (const auto& job : host.result->jobs()) {
        for (const auto& m : job.measurements()) EXPECT_THAT(m.series(), IsEmpty());
      }
      // Its own series too: the phase's validity window was measured from the stored rows.
      EXPECT_THAT(host.result->series(), IsEmpty());
      EXPECT_FALSE(host.result->host_environment().empty());
      EXPECT_FALSE(host.result->measurements().empty());
    }
    // The phase's table, as `stormark run` prints it then, is the one of the whole results
    // (and so the one `stormark results show` prints from the database).
    const size_t n = run.phases.size();
    EXPECT_EQ(FormatPhaseTable(run.phases[p], Summarize(run.phases[p]), p, n, 2),
              FormatPhaseTable(whole.phases[p], Summarize(whole.phases[p]), p, n, 2));
    const FullPhase full(run, p);
    ASSERT_TRUE(full.status().ok()) << full.status();
    for (size_t h = 0; h < full->hosts.size(); ++h) {
      const auto& want = whole.phases[p].hosts[h].result;
      ASSERT_EQ(full->hosts[h].result.has_value(), want.has_value());
      if (want) {
        // Read back with its series packed, and whole once they are put back.
        EXPECT_THAT(full->hosts[h].result->series(), IsEmpty());
        PhaseResult unpacked;
        EXPECT_TRUE(MessageDifferencer::Equals(*WithSeries(full->hosts[h], &unpacked), *want));
      }
    }
  }
  EXPECT_EQ(RunJsonText(run), RunJsonText(whole));
}

// A write that fails mid-phase (here: a row already there) must not cost the run's own outputs
// the series the journal dropped: EndPhase puts the results back whole.
TEST_F(FullPhaseTest, AFailedWriteGivesTheDroppedSeriesBack) {
  const RunRecord whole = RichRun();
  auto store = ResultsStore::Open(dir_ + "/results.db");
  ASSERT_TRUE(store.ok()) << store.status();
  journal_ = std::make_unique<RunJournal>(std::move(*store), err_);
  journal_->Begin(whole, {"test", RunMode::kConcurrent, 1, RunOwner::Self()});
  PhaseOutcome phase = whole.phases[0];
  journal_->BeginPhase(whole.run_id, 0, phase, whole.agents.size());
  {
    // Another connection puts host 0's row in first.
    auto other = ResultsStore::OpenExisting(dir_ + "/results.db");
    ASSERT_TRUE(other.ok()) << other.status();
    ASSERT_TRUE((*other)->AddHosts(whole.run_id, 0, {{0, whole.phases[0].hosts[0]}}).ok());
  }
  auto done = journal_->host_done();
  ASSERT_NE(done, nullptr);
  for (size_t h = 0; h < phase.hosts.size(); ++h) done(h, &phase.hosts[h]);
  journal_->EndPhase(whole.run_id, 0, &phase);
  EXPECT_FALSE(journal_->healthy());
  for (size_t h = 0; h < phase.hosts.size(); ++h) {
    const auto& want = whole.phases[0].hosts[h].result;
    if (!want) continue;
    EXPECT_FALSE(phase.hosts[h].result_trimmed) << h;
    EXPECT_TRUE(MessageDifferencer::Equals(*phase.hosts[h].result, *want)) << h;
  }
}

TEST_F(FullPhaseTest, APhaseThatCannotBeReadBackIsAnErrorAndItsSummariesStand) {
  const RunRecord whole = RichRun();
  Record(whole);
  RunRecord cut = Cut(whole);
  cut.read_back = [inner = cut.read_back](size_t index, std::vector<std::string>* packed) {
    if (index == 1) {
      return common::StatusOr<std::vector<std::optional<PhaseResult>>>(
          absl::DataLossError("results.db: disk I/O error"));
    }
    return inner(index, packed);
  };
  const std::string path = dir_ + "/run.json";
  const Status written = WriteJsonReport(cut, path);
  EXPECT_THAT(written.message(), HasSubstr("reading the results of phase 2 back"));
  EXPECT_THAT(written.message(), HasSubstr("disk I/O error"));
  EXPECT_TRUE(std::filesystem::exists(path));  // The rest of the report is not lost.

  Status read_back;
  const std::string bonnie = RunBonnieCsv(cut, &read_back);
  EXPECT_THAT(read_back.message(), HasSubstr("phase 2"));
  // Phase 2 is the first bonnie phase: its lines are left out, never written as zeros.
  EXPECT_EQ(std::count(bonnie.begin(), bonnie.end(), '\n'), 3 * 3);
  // The sweep summary leaves that phase's runs out, and says so under the table.
  EXPECT_THAT(SweepSummaryTable(cut, 2),
              HasSubstr("  note: reading the results of phase 2 back: results.db: disk I/O error: "
                        "that phase's runs are left out of this table\n"));
}

TEST_F(FullPhaseTest, AStoredResultThatIsNotTheRunsIsRefused) {
  const RunRecord whole = RichRun();
  Record(whole);
  RunRecord cut = Cut(whole);
  cut.read_back = [inner = cut.read_back](size_t index, std::vector<std::string>* packed) {
    auto results = inner(index, packed);
    if (results.ok()) (*results)[0]->set_state(PhaseResult::ABORTED);
    return results;
  };
  const FullPhase phase(cut, 0);
  EXPECT_THAT(phase.status().message(),
              HasSubstr("holds another result of host a in phase 1 than the run had"));
  PhaseResult unpacked;
  EXPECT_THAT(WithSeries(phase->hosts[0], &unpacked)->series(), IsEmpty());  // Its summary stands.
  EXPECT_THAT(WithSeries(phase->hosts[1], &unpacked)->series(), Not(IsEmpty()));
}

TEST_F(FullPhaseTest, APhaseNotCutIsUsedAsItIsAndNothingIsRead) {
  const RunRecord whole = RichRun();
  RunRecord run = whole;
  run.read_back =
      [](size_t,
         std::vector<std::string>*) -> common::StatusOr<std::vector<std::optional<PhaseResult>>> {
    ADD_FAILURE() << "read back a phase that was not cut";
    return absl::InternalError("no");
  };
  const FullPhase phase(run, 0);
  EXPECT_TRUE(phase.status().ok());
  EXPECT_EQ(&*phase, &run.phases[0]);
  EXPECT_EQ(RunJsonText(run), RunJsonText(whole));
}

}  // namespace
}  // namespace stormark::controller
