#include "agent/workloads/postmark/postmark.h"
#include "agent/dir/fault_dir.h"
#include "agent/dir/memory_dir.h"
#include "agent/targets/dir/dir_target.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "agent/workloads/factory.h"
#include "agent/workloads/workload_registry.h"
#include "common/clock.h"
#include "common/recorder.h"
#include "common/spec_check.h"
#include "common/workloads/postmark/postmark_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using stormark::v1::Measurement;
using stormark::v1::PhaseResult;
using stormark::v1::PostmarkSpec;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::atomic<bool> kNotCancelled{false};
constexpr uint64_t kGiB = uint64_t{1} << 30;

const std::vector<std::string> kMeasurements = {"total",        "create_alone", "transactions",
                                                "create_mixed", "read",         "append",
                                                "delete_mixed", "delete_alone"};

PostmarkSpec SmallSpec() {
  PostmarkSpec spec;
  spec.set_number(100);
  spec.set_min_size_bytes(500);
  spec.set_max_size_bytes(3000);
  spec.set_transactions(1000);
  spec.set_seed(42);
  return spec;
}

std::map<std::string, Measurement> ByName(const PhaseResult& result) {
  std::map<std::string, Measurement> out;
  for (const Measurement& m : result.measurements()) out[m.name()] = m;
  return out;
}

class PostmarkWorkloadTest : public TempDirTest {
 protected:
  std::unique_ptr<PostmarkWorkload> Make(const PostmarkSpec& spec, uint64_t ram = 64 * kGiB,
                                         const std::string& filesystem = "ext4") {
    const TargetConfig config{"scratch", "dir", dir()};
    auto target = OpenPhaseDir(config, "phase1");
    EXPECT_TRUE(target.ok()) << target.status();
    if (!target.ok()) return nullptr;
    phase_dir_ = (*target)->Describe("");
    HostFacts host;
    host.ram_bytes = ram;
    return std::make_unique<PostmarkWorkload>(spec, std::move(*target), host, filesystem);
  }

  common::Status RunIt(PostmarkWorkload& workload) {
    TimedRegion region(common::SystemClock(), recorders_);
    RunContext ctx{common::SystemClock(), cancelled_, recorders_, region};
    return workload.Run(ctx);
  }

  // Prepares and runs `workload`, cancelling it once it has done `ops` file operations.
  common::Status RunAndCancelAfter(PostmarkWorkload& workload, uint64_t ops) {
    std::vector<std::string> warnings;
    common::Status prepared = workload.Prepare(kNotCancelled, &warnings);
    if (!prepared.ok()) return prepared;
    std::thread canceller([&] {
      while (recorders_.TotalOps() < ops) std::this_thread::yield();
      cancelled_ = true;
    });
    const common::Status status = RunIt(workload);
    canceller.join();
    return status;
  }

  std::atomic<bool> cancelled_{false};
  common::RecorderSet recorders_{common::SystemClock().MonotonicNanos()};
  std::string phase_dir_;
};

// The counts are the model's (postmark_model_test.cc checks those against PostMark); here,
// that the workload does each operation once, measures it, and leaves nothing behind.
TEST_F(PostmarkWorkloadTest, RunsPoolTransactionsAndTeardownWithMatchingCounts) {
  auto workload = Make(SmallSpec());
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  ASSERT_TRUE(RunIt(*workload).ok());
  EXPECT_THAT(ListDir(phase_dir_), IsEmpty());  // The teardown deleted every file.
  PhaseResult result;
  workload->AddToResult(&result);

  std::vector<std::string> names;
  for (const Measurement& m : result.measurements()) names.push_back(m.name());
  EXPECT_EQ(names, kMeasurements);
  auto m = ByName(result);
  EXPECT_EQ(m["create_alone"].ops(), 100u);
  EXPECT_EQ(m["transactions"].ops(), 1000u);
  const uint64_t created = m["create_alone"].ops() + m["create_mixed"].ops();
  EXPECT_EQ(m["delete_mixed"].ops() + m["delete_alone"].ops(), created);
  EXPECT_EQ(m["create_mixed"].ops() + m["delete_mixed"].ops(), 1000u);
  EXPECT_GT(m["read"].ops(), 300u);
  EXPECT_GT(m["append"].ops(), 300u);
  // A transaction's bytes are its read or append plus its create.
  EXPECT_EQ(m["transactions"].bytes(),
            m["create_mixed"].bytes() + m["read"].bytes() + m["append"].bytes());
  uint64_t ops = 0, bytes = 0;
  for (const char* name :
       {"create_alone", "create_mixed", "read", "append", "delete_mixed", "delete_alone"}) {
    EXPECT_EQ(m[name].latency().count(), m[name].ops()) << name;
    ops += m[name].ops();
    bytes += m[name].bytes();
  }
  EXPECT_EQ(m["total"].ops(), ops);
  EXPECT_EQ(m["total"].bytes(), bytes);
  EXPECT_EQ(recorders_.TotalOps(), ops);
  EXPECT_EQ(recorders_.TotalBytes(), bytes);
  EXPECT_EQ(m["read"].elapsed_nanos(), m["transactions"].elapsed_nanos());
  EXPECT_GE(m["total"].elapsed_nanos(), m["create_alone"].elapsed_nanos() +
                                            m["transactions"].elapsed_nanos() +
                                            m["delete_alone"].elapsed_nanos());
  EXPECT_EQ(m["total"].too_fast(), m["total"].elapsed_nanos() < kPostmarkMinTimeNanos);
  const bool short_transactions = m["transactions"].elapsed_nanos() < kPostmarkMinTimeNanos;
  EXPECT_EQ(m["transactions"].too_fast(), short_transactions);
  bool warned = false;
  for (const std::string& w : result.warnings()) {
    warned = warned || w.find("too short for a stable rate; raise transactions") != w.npos;
  }
  EXPECT_EQ(warned, short_transactions);

  EXPECT_EQ(result.resolved().at("number"), "100");
  EXPECT_EQ(result.resolved().at("max_size_bytes"), "3000");
  EXPECT_EQ(result.resolved().at("buffering"), "buffered");
  EXPECT_EQ(result.resolved().at("seed"), "42");
  EXPECT_EQ(result.resolved().at("transactions_run"), "1000");
  EXPECT_EQ(result.resolved().at("out_of_files"), "false");
  EXPECT_GE(std::stoull(result.resolved().at("peak_files")), 100u);

  EXPECT_EQ(workload->Cleanup().removed, 1);  // The phase directory.
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PostmarkWorkloadTest, UnbufferedWithSubdirectoriesGivesTheSameCounts) {
  PhaseResult buffered_result, unbuffered_result;
  for (bool unbuffered : {false, true}) {
    PostmarkSpec spec = SmallSpec();
    spec.set_subdirectories(5);
    spec.set_unbuffered(unbuffered);
    spec.set_read_block_size(100);
    spec.set_write_block_size(300);
    auto workload = Make(spec);
    ASSERT_NE(workload, nullptr);
    std::vector<std::string> warnings;
    ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
    EXPECT_THAT(ListDir(phase_dir_), ElementsAre("s0", "s1", "s2", "s3", "s4"));
    ASSERT_TRUE(RunIt(*workload).ok());
    for (const char* d : {"s0", "s1", "s2", "s3", "s4"}) {
      EXPECT_THAT(ListDir(phase_dir_ + "/" + d), IsEmpty()) << d;
    }
    workload->AddToResult(unbuffered ? &unbuffered_result : &buffered_result);
    EXPECT_EQ(workload->Cleanup().removed, 6);  // Five subdirectories and the phase directory.
  }
  EXPECT_EQ(unbuffered_result.resolved().at("buffering"), "unbuffered");
  auto a = ByName(buffered_result), b = ByName(unbuffered_result);
  for (const std::string& name : kMeasurements) {
    EXPECT_EQ(a[name].ops(), b[name].ops()) << name;
    EXPECT_EQ(a[name].bytes(), b[name].bytes()) << name;
  }
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PostmarkWorkloadTest, CancelStopsTheRunAndCleanupRemovesEverything) {
  PostmarkSpec spec = SmallSpec();
  spec.set_subdirectories(3);
  spec.set_transactions(2'000'000'000);  // Far longer than the test waits.
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  const common::Status status = RunAndCancelAfter(*workload, 500);
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_THAT(status.message(), HasSubstr("transactions"));
  PhaseResult result;
  workload->AddToResult(&result);
  EXPECT_EQ(result.measurements_size(), 0);  // No figures from a run that did not finish.
  const int left = CountEntries(phase_dir_);
  EXPECT_GT(left, 3 + 50);  // The subdirectories and the files that existed.
  EXPECT_EQ(workload->Cleanup().removed, left + 1);
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PostmarkWorkloadTest, DestructorRemovesWhatACancelledPoolLeft) {
  {
    PostmarkSpec spec = SmallSpec();
    spec.set_number(100000);
    auto workload = Make(spec);
    ASSERT_NE(workload, nullptr);
    const common::Status status = RunAndCancelAfter(*workload, 200);
    EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
    EXPECT_THAT(status.message(), HasSubstr("creation of the pool"));
    EXPECT_GE(CountEntries(phase_dir_), 200);
  }
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(PostmarkWorkloadTest, PrepareWarnsAboutThePageCacheAndTmpfs) {
  auto workload = Make(SmallSpec(), 64 * kGiB, "tmpfs");
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("is on tmpfs"),
                                    HasSubstr("fits in the page cache: the files never hold "
                                              "more than 586 KiB")));
}

TEST_F(PostmarkWorkloadTest, ResultWarnsWithThePeakWhenTheBoundExceedsRam) {
  // 2 x 100 x 3000 bytes is above this "RAM", the files' peak is below it.
  auto workload = Make(SmallSpec(), 400'000);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, IsEmpty());
  ASSERT_TRUE(RunIt(*workload).ok());
  PhaseResult result;
  workload->AddToResult(&result);
  EXPECT_THAT(result.warnings(),
              Contains(HasSubstr("fits in the page cache: the files held at most")));
}

TEST_F(PostmarkWorkloadTest, OutOfFilesStopsEarlyWithAWarning) {
  PostmarkSpec spec = SmallSpec();
  spec.set_bias_create(0);  // Every transaction deletes a file.
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  ASSERT_TRUE(RunIt(*workload).ok());
  PhaseResult result;
  workload->AddToResult(&result);
  EXPECT_EQ(result.resolved().at("out_of_files"), "true");
  EXPECT_EQ(result.resolved().at("transactions_run"), "100");
  EXPECT_THAT(result.warnings(), Contains(HasSubstr("out of files after 100 of 1000")));
  EXPECT_EQ(ByName(result)["delete_alone"].ops(), 0u);
}

TEST_F(PostmarkWorkloadTest, PrepareRefusesABadSpecAndStopsWhenCancelled) {
  PostmarkSpec spec = SmallSpec();
  spec.set_bias_read(11);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  const common::Status status = workload->Prepare(kNotCancelled, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("bias read 11 is out of range"));
  workload->Cleanup();

  auto second = Make(SmallSpec());
  ASSERT_NE(second, nullptr);
  const std::atomic<bool> cancelled{true};
  EXPECT_EQ(second->Prepare(cancelled, &warnings).code(), absl::StatusCode::kCancelled);
}

TEST_F(PostmarkWorkloadTest, RunBeforePrepareFails) {
  auto workload = Make(SmallSpec());
  ASSERT_NE(workload, nullptr);
  EXPECT_EQ(RunIt(*workload).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PostmarkWorkloadTest, TheFactoryBuildsItAndTheAgentListsIt) {
  HostFacts host;
  stormark::v1::PhaseSpec spec;
  spec.set_phase_id("p1");
  spec.set_target("scratch");
  *spec.mutable_postmark() = SmallSpec();
  auto workload = MakeWorkload(spec, ConfigWithTarget(), host);
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_NE(dynamic_cast<PostmarkWorkload*>(workload->get()), nullptr);
  EXPECT_THAT(KnownWorkloads(), Contains("postmark"));
  spec.mutable_postmark()->set_min_size_bytes(5000);  // Above the high bound.
  EXPECT_EQ(MakeWorkload(spec, ConfigWithTarget(), host).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PostmarkSpecCheck, RefusesWhatPostmarkCannotRun) {
  PostmarkSpec spec;
  EXPECT_TRUE(common::CheckPostmarkSpec(spec).ok());  // All defaults.
  spec.set_max_size_bytes(100);
  EXPECT_THAT(common::CheckPostmarkSpec(spec).message(), HasSubstr("low bound must be at least 1"));
  spec.set_min_size_bytes(200);
  EXPECT_THAT(common::CheckPostmarkSpec(spec).message(), HasSubstr("above the high bound"));
  spec = PostmarkSpec();
  spec.set_max_size_bytes(1ull << 30);
  spec.set_min_size_bytes(1);
  EXPECT_THAT(common::CheckPostmarkSpec(spec).message(), HasSubstr("over the limit of 256M"));
  spec = PostmarkSpec();
  spec.set_bias_create(-2);
  EXPECT_THAT(common::CheckPostmarkSpec(spec).message(), HasSubstr("bias create -2"));
  spec.set_bias_create(-1);
  EXPECT_TRUE(common::CheckPostmarkSpec(spec).ok());
  spec.set_seed(3'000'000'000u);
  EXPECT_THAT(common::CheckPostmarkSpec(spec).message(), HasSubstr("seed"));
  spec = PostmarkSpec();
  spec.set_write_block_size(128u << 20);
  EXPECT_THAT(common::CheckPostmarkSpec(spec).message(), HasSubstr("write block size"));
}

// --- Error paths, on a Dir in memory with faults: no disk, no root. ---

class PostmarkFaultTest : public ::testing::TestWithParam<bool /* unbuffered */> {
 protected:
  common::Status PrepareAndRun(const DirFaults& faults, PostmarkSpec spec = SmallSpec()) {
    spec.set_unbuffered(GetParam());
    HostFacts host;
    host.ram_bytes = 64 * kGiB;
    workload_ = std::make_unique<PostmarkWorkload>(
        spec, std::make_unique<FaultDir>(&memory_, faults), host, "ext4");
    std::vector<std::string> warnings;
    RETURN_IF_ERROR(workload_->Prepare(kNotCancelled, &warnings));
    TimedRegion region(common::SystemClock(), recorders_);
    RunContext ctx{common::SystemClock(), cancelled_, recorders_, region};
    common::Status status = workload_->Run(ctx);
    workload_->AddToResult(&result_);
    return status;
  }

  MemoryDir memory_{"scratch"};
  std::unique_ptr<PostmarkWorkload> workload_;
  PhaseResult result_;
  std::atomic<bool> cancelled_{false};
  common::RecorderSet recorders_{common::SystemClock().MonotonicNanos()};
};

TEST_P(PostmarkFaultTest, RunsOnAMemoryDirAndShortWritesLoseNothing) {
  DirFaults faults;
  faults.max_write_bytes = 77;
  const common::Status status = PrepareAndRun(faults);
  ASSERT_TRUE(status.ok()) << status;
  // Every read found its file the size the model gave it: reads are checked for that.
  EXPECT_EQ(ByName(result_)["total"].ops(), recorders_.TotalOps());
  EXPECT_GT(ByName(result_)["read"].bytes(), 0u);
  EXPECT_THAT(memory_.Names(), IsEmpty());
}

TEST_P(PostmarkFaultTest, AFullDiskAtCreateFailsThePhaseAndCleanupRemovesTheRest) {
  DirFaults faults;
  faults.create_errno = ENOSPC;
  faults.creates_before_error = 50;
  const common::Status status = PrepareAndRun(faults);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("No space left on device")) << status;
  EXPECT_THAT(status.message(), HasSubstr("target 'scratch'")) << status;
  EXPECT_EQ(memory_.Names().size(), 50u);
  workload_->Cleanup();
  EXPECT_THAT(memory_.Names(), IsEmpty());
}

TEST_P(PostmarkFaultTest, AWriteErrorFailsThePhaseNamingTheFile) {
  DirFaults faults;
  faults.write_errno = EIO;
  faults.bytes_before_write_error = 20'000;
  const common::Status status = PrepareAndRun(faults);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("postmark: ")) << status;
  EXPECT_THAT(status.message(), HasSubstr("Input/output error")) << status;
  workload_->Cleanup();
  EXPECT_THAT(memory_.Names(), IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(BufferedAndUnbuffered, PostmarkFaultTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Unbuffered" : "Buffered";
                         });

}  // namespace
}  // namespace stormark::agent
