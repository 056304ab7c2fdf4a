#include "controller/fio/fio_logs.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller::fio {
namespace {

using ::testing::ElementsAre;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

// One direction of a randio result: `per_interval` operations of 4 KiB in each interval of
// `interval` ns, each `latency` ns (0 operations: an interval in which it moved nothing).
void AddDirection(stormark::v1::PhaseResult* r, const char* name,
                  const std::vector<uint64_t>& per_interval, int64_t interval, uint64_t latency,
                  google::protobuf::RepeatedPtrField<stormark::v1::Measurement>* into = nullptr) {
  stormark::v1::Measurement* m = (into ? into : r->mutable_measurements())->Add();
  m->set_name(name);
  for (size_t i = 0; i < per_interval.size(); ++i) {
    auto* s = m->add_series();
    s->set_offset_nanos(static_cast<int64_t>(i) * interval);
    s->set_length_nanos(interval);
    s->set_ops(per_interval[i]);
    s->set_bytes(per_interval[i] * 4096);
    s->set_latency_sum_nanos(per_interval[i] * latency);
    m->set_ops(m->ops() + per_interval[i]);
  }
}

PhasePlan LoggedPlan(std::vector<PhasePlan::FioLog> logs) {
  PhasePlan plan = WritePlan("mix");
  plan.spec.mutable_randio()->set_rw(stormark::v1::RandioSpec::RANDRW);
  plan.fio_logs = std::move(logs);
  return plan;
}

// An IOPS log with `prefix` (empty: none) of fio's job `number`, with `clones` clones.
PhasePlan::FioLog IopsLog(const std::string& prefix, int number, int clones = 1) {
  PhasePlan::FioLog log;
  log.iops = prefix;
  log.thread_number = number;
  log.clones = clones;
  return log;
}

TEST(FioLogs, OneFilePerLogJobAndHostInFiosLayout) {
  HostOutcome a = SucceededHost("db1", 1);
  a.result->clear_measurements();
  AddDirection(&*a.result, "read", {1000, 500}, kSecond, 80'000);
  AddDirection(&*a.result, "write", {250, 0}, kSecond, 200'000);
  HostOutcome b = SucceededHost("db/2", 1);  // Not a file name as it is.
  b.result->clear_measurements();
  AddDirection(&*b.result, "read", {10}, kSecond / 2, 1'000);
  PhasePlan::FioLog log;
  log.job = "mix";
  log.bw = "out/mix";
  log.lat = "mix";
  log.thread_number = 3;
  const std::vector<FioLogFile> files =
      FioLogs(MakeRun("r1", {"db1", "db/2"}, {Phase(LoggedPlan({log}), {a, b})}));
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(f.path);
  EXPECT_THAT(paths,
              ElementsAre("out/mix_bw.3.log.db1", "mix_lat.3.log.db1", "mix_clat.3.log.db1",
                          "out/mix_bw.3.log.db_2", "mix_lat.3.log.db_2", "mix_clat.3.log.db_2"));
  // time (the interval's end, ms), KiB/s, ddir, 0; an interval without writes has no line.
  EXPECT_EQ(files[0].text, "1000, 4000, 0, 0\n1000, 1000, 1, 0\n2000, 2000, 0, 0\n");
  EXPECT_EQ(files[1].text, "1000, 80000, 0, 0\n1000, 200000, 1, 0\n2000, 80000, 0, 0\n");
  EXPECT_EQ(files[2].text, files[1].text);
  EXPECT_EQ(files[3].text, "500, 80, 0, 0\n");  // 10 x 4 KiB in half a second
}

TEST(FioLogs, UnixEpochTimesAreOnTheControllersClock) {
  HostOutcome a = SucceededHost("db1", 1);
  a.result->clear_measurements();
  a.result->set_start_unix_nanos(kBase + 5 * kSecond);
  a.clock.offset_nanos = 2 * kSecond;  // The agent's clock is 2 s ahead.
  AddDirection(&*a.result, "read", {100}, kSecond, 1'000);
  PhasePlan::FioLog log;
  log.iops = "x";
  log.unix_epoch = true;
  const auto files = FioLogs(MakeRun("r1", {"db1"}, {Phase(LoggedPlan({log}), {a})}));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "x_iops.1.log.db1");
  EXPECT_EQ(files[0].text,
            std::to_string((kBase + 3 * kSecond) / 1'000'000 + 1000) + ", 100, 0, 0\n");
}

// A run group's result: job "r" read `reads` operations, job "w" wrote 3, in one second.
HostOutcome ReaderWriterHost(uint64_t reads) {
  HostOutcome a = SucceededHost("db1", 1);
  auto* reader = a.result->add_jobs();
  reader->set_name("r");
  AddDirection(&*a.result, "read", {reads}, kSecond, 1'000, reader->mutable_measurements());
  auto* writer = a.result->add_jobs();
  writer->set_name("w");
  AddDirection(&*a.result, "write", {3}, kSecond, 1'000, writer->mutable_measurements());
  return a;
}

TEST(FioLogs, EachJobOfARunGroupHasItsOwnFileAndRepeatsAreNumbered) {
  HostOutcome a = ReaderWriterHost(7);
  const PhasePlan plan = LoggedPlan({IopsLog("r", 1), IopsLog("w", 2)});
  const auto files = FioLogs(MakeRun("r1", {"db1"}, {Phase(plan, {a}), Phase(plan, {a}, 1)}));
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].path, "r_iops.1.log.db1");
  EXPECT_EQ(files[0].text, "1000, 7, 0, 0\n");
  EXPECT_EQ(files[1].path, "w_iops.2.log.db1");
  EXPECT_EQ(files[1].text, "1000, 3, 1, 0\n");
  EXPECT_EQ(files[2].path, "r-2_iops.1.log.db1");
}

// A group of a 2-clone reader (logged) and a writer (logged): threads 0 and 1 are the reader's
// clones, thread 2 the writer.
HostOutcome ClonedHost() {
  HostOutcome a = ReaderWriterHost(9);
  for (uint64_t ops : {4, 5}) {
    AddDirection(&*a.result, "read", {ops}, kSecond, 1'000,
                 a.result->add_threads()->mutable_measurements());
  }
  AddDirection(&*a.result, "write", {3}, kSecond, 1'000,
               a.result->add_threads()->mutable_measurements());
  return a;
}

TEST(FioLogs, EachCloneHasItsOwnFileFromItsThread) {
  const PhasePlan plan = LoggedPlan({IopsLog("r", 1, 2), IopsLog("w", 3)});
  const auto files = FioLogs(MakeRun("r1", {"db1"}, {Phase(plan, {ClonedHost()})}));
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, "r_iops.1.log.db1");
  EXPECT_EQ(files[0].text, "1000, 4, 0, 0\n");
  EXPECT_EQ(files[1].path, "r_iops.2.log.db1");
  EXPECT_EQ(files[1].text, "1000, 5, 0, 0\n");
  EXPECT_EQ(files[2].path, "w_iops.3.log.db1");
  EXPECT_EQ(files[2].text, "1000, 3, 1, 0\n");
}

TEST(FioLogs, WithoutPerJobLogsClonesShareOneFile) {
  PhasePlan::FioLog r = IopsLog("r", 1, 2);
  r.per_job = false;
  const PhasePlan plan = LoggedPlan({r, IopsLog("", 3)});  // The writer logs nothing.
  const auto files = FioLogs(MakeRun("r1", {"db1"}, {Phase(plan, {ClonedHost()})}));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "r_iops.log.db1");
  EXPECT_EQ(files[0].text, "1000, 4, 0, 0\n1000, 5, 0, 0\n");
}

TEST(FioLogs, AnAgentWithoutThreadFiguresLogsTheClonesTogether) {
  HostOutcome a = ClonedHost();
  a.result->clear_threads();
  const PhasePlan plan = LoggedPlan({IopsLog("r", 1, 2), IopsLog("", 3)});
  const auto files = FioLogs(MakeRun("r1", {"db1"}, {Phase(plan, {a})}));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "r_iops.1.log.db1");
  EXPECT_EQ(files[0].text, "1000, 9, 0, 0\n");
}

TEST(FioLogs, APhaseThatAsksForNoneWritesNone) {
  EXPECT_TRUE(
      FioLogs(MakeRun("r1", {"db1"}, {Phase(WritePlan(), {SucceededHost("db1", 1)})})).empty());
}

}  // namespace
}  // namespace stormark::controller::fio
