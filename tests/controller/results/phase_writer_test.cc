#include "controller/results/phase_writer.h"

#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

#include <google/protobuf/util/message_differencer.h>

#include "common/strings.h"
#include "controller/results/results_query.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using google::protobuf::util::MessageDifferencer;
using ::testing::Each;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

class PhaseWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/var/tmp/stormark-phase-writer-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    auto store = ResultsStore::Open(dir_ + "/results.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // A run of `hosts` hosts begun, with its one phase begun too.
  RunRecord BeginRunAndPhase(size_t hosts) {
    std::vector<std::string> names;
    std::vector<HostOutcome> outcomes;
    for (size_t h = 0; h < hosts; ++h) {
      names.push_back(common::StrCat("h", h, ":7420"));
      outcomes.push_back(SucceededHost(names.back(), 100 + h));
    }
    RunRecord run = MakeRun("r1", names, {Phase(WritePlan(), outcomes)});
    EXPECT_TRUE(store_->BeginRun(run, {"x", RunMode::kConcurrent, 1, RunOwner::Self()}).ok());
    PhaseOutcome begun;
    begun.plan = run.phases[0].plan;
    begun.phase_id = run.phases[0].phase_id;
    EXPECT_TRUE(store_->BeginPhase("r1", 0, begun).ok());
    return run;
  }

  int64_t Rows() {
    auto rows = store_->db().QueryInt("SELECT COUNT(*) FROM host_results WHERE run_id = 'r1'");
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *rows : -1;
  }

  std::string dir_;
  std::unique_ptr<ResultsStore> store_;
};

TEST_F(PhaseWriterTest, ResultsAddedFromManyThreadsAreEachWrittenOnce) {
  constexpr size_t kHosts = 400;
  RunRecord run = BeginRunAndPhase(kHosts);
  PhaseWriter writer(store_.get(), "r1", 0, kHosts);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t h = t; h < kHosts; h += 4) {
        writer.Add(h, &run.phases[0].hosts[h]);
        writer.Add(h, &run.phases[0].hosts[h]);  // Twice: the second is dropped.
      }
    });
  }
  for (std::thread& t : threads) t.join();
  writer.Add(kHosts, &run.phases[0].hosts[0]);  // No such host: dropped.
  std::vector<char> written;
  ASSERT_TRUE(writer.Finish(&written).ok());
  ASSERT_EQ(written.size(), kHosts);
  EXPECT_THAT(written, Each(1));
  EXPECT_EQ(Rows(), static_cast<int64_t>(kHosts));
  ASSERT_TRUE(store_->EndPhase("r1", 0, run.phases[0], written).ok());
  EXPECT_EQ(Rows(), static_cast<int64_t>(kHosts));
}

// The queue holds results serialized: what is written is each result whole, with its series
// and environment, and the caller's outcome is as it was.
TEST_F(PhaseWriterTest, EachResultIsWrittenWholeAndTheCallersOutcomeIsUntouched) {
  RunRecord run = BeginRunAndPhase(3);
  for (HostOutcome& host : run.phases[0].hosts) {
    for (int k = 1; k < 50; ++k) {
      auto* sample = host.result->add_series();
      sample->set_offset_nanos(k * kSecond);
      sample->set_length_nanos(kSecond);
      sample->set_bytes(k);
    }
    (*host.result->mutable_host_environment())["kernel"] = "6.1.0";
    host.error = "a note";
  }
  const RunRecord before = run;
  PhaseWriter writer(store_.get(), "r1", 0, 3);
  for (size_t h = 0; h < 3; ++h) EXPECT_TRUE(writer.Add(h, &run.phases[0].hosts[h]));
  std::vector<char> written;
  ASSERT_TRUE(writer.Finish(&written).ok());
  EXPECT_THAT(written, Each(1));
  auto stored = LoadPhaseResults(*store_, "r1", 0, 3);
  ASSERT_TRUE(stored.ok()) << stored.status();
  for (size_t h = 0; h < 3; ++h) {
    const HostOutcome& host = run.phases[0].hosts[h];
    ASSERT_TRUE(host.result.has_value());
    EXPECT_TRUE(MessageDifferencer::Equals(*host.result, *before.phases[0].hosts[h].result));
    EXPECT_EQ(host.error, "a note");
    ASSERT_TRUE((*stored)[h].has_value());
    EXPECT_TRUE(MessageDifferencer::Equals(*(*stored)[h], *host.result)) << h;
  }
  auto samples = store_->db().QueryInt("SELECT COUNT(*) FROM series WHERE run_id = 'r1'");
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(*samples, 3 * 50);
}

TEST_F(PhaseWriterTest, ARowIsInTheStoreSoonAfterItsResultCame) {
  // A controller that dies during the phase must leave it: the row may not wait for the end.
  RunRecord run = BeginRunAndPhase(3);
  PhaseWriter writer(store_.get(), "r1", 0, 3);
  writer.Add(1, &run.phases[0].hosts[1]);
  auto other = ResultsStore::OpenExisting(dir_ + "/results.db");  // Another reader's view.
  ASSERT_TRUE(other.ok()) << other.status();
  int64_t rows = 0;
  for (int i = 0; i < 500 && rows == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto count = (*other)->db().QueryInt("SELECT COUNT(*) FROM host_results");
    ASSERT_TRUE(count.ok()) << count.status();
    rows = *count;
  }
  EXPECT_EQ(rows, 1);
  std::vector<char> written;
  ASSERT_TRUE(writer.Finish(&written).ok());
  EXPECT_THAT(written, ::testing::ElementsAre(0, 1, 0));
}

TEST_F(PhaseWriterTest, AFailedWriteIsReturnedWithTheOutcomesItLostAndLaterOnesAreRefused) {
  RunRecord run = BeginRunAndPhase(2);
  // A row already there (as from another writer) makes the batch's insert fail.
  ASSERT_TRUE(store_->AddHosts("r1", 0, {{0, run.phases[0].hosts[0]}}).ok());
  PhaseWriter writer(store_.get(), "r1", 0, 2);
  EXPECT_TRUE(writer.Add(0, &run.phases[0].hosts[0]));
  // Taken before the failure is seen, or refused after (its caller then keeps it whole).
  const bool took_second = writer.Add(1, &run.phases[0].hosts[1]);
  std::vector<char> written;
  std::vector<std::pair<size_t, HostOutcome>> unwritten;
  const common::Status status = writer.Finish(&written, &unwritten);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("results.db"));
  EXPECT_THAT(written, ::testing::ElementsAre(0, 0));
  EXPECT_EQ(Rows(), 1);
  // Every outcome it took and did not write is given back, whole.
  ASSERT_EQ(unwritten.size(), took_second ? 2u : 1u);
  EXPECT_EQ(unwritten[0].first, 0u);
  if (took_second) {
    EXPECT_EQ(unwritten[1].first, 1u);
  }
  EXPECT_EQ(unwritten[0].second.result->SerializeAsString(),
            run.phases[0].hosts[0].result->SerializeAsString());
  EXPECT_FALSE(writer.Add(1, &run.phases[0].hosts[1]));  // After Finish: refused.
}

}  // namespace
}  // namespace stormark::controller
