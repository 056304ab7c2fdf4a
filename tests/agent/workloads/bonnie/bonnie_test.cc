#include "agent/workloads/bonnie/bonnie.h"
#include "agent/dir/fault_dir.h"
#include "agent/dir/memory_dir.h"
#include "agent/targets/dir/dir_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/workloads/factory.h"
#include "common/clock.h"
#include "common/recorder.h"
#include "common/spec_check.h"
#include "common/workloads/bonnie/bonnie_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using stormark::v1::BonnieSpec;
using stormark::v1::Measurement;
using stormark::v1::PhaseResult;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const std::atomic<bool> kNotCancelled{false};

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kChunk = 8192;

const std::vector<std::string> kAllTests = {"putc",      "put_block",  "rewrite",    "getc",
                                            "get_block", "seeks",      "seq_create", "seq_stat",
                                            "seq_del",   "ran_create", "ran_stat",   "ran_del"};

// Small enough that the whole suite runs in well under a second.
BonnieSpec SmallSpec() {
  BonnieSpec spec;
  spec.set_size_bytes(8 * kMiB);
  spec.set_chunk_size(kChunk);
  spec.set_char_size_bytes(kMiB);
  spec.set_seeks(200);
  spec.set_files_k(1);
  spec.set_seed(42);
  return spec;
}

HostFacts HostWithRam(uint64_t ram) {
  HostFacts host;
  host.ram_bytes = ram;
  return host;
}

std::vector<std::string> Names(const PhaseResult& result) {
  std::vector<std::string> names;
  for (const Measurement& m : result.measurements()) names.push_back(m.name());
  return names;
}

const Measurement& Find(const PhaseResult& result, const std::string& name) {
  for (const Measurement& m : result.measurements()) {
    if (m.name() == name) return m;
  }
  static const Measurement kMissing;
  ADD_FAILURE() << "no measurement " << name;
  return kMissing;
}

class BonnieWorkloadTest : public TempDirTest {
 protected:
  void TearDown() override {
    if (!memory_dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(memory_dir_, ec);
    }
    TempDirTest::TearDown();
  }

  // The file tests end with syncfs, which on a shared disk waits for everyone's dirty data:
  // tests that write many small files or fsync them use a directory in /dev/shm instead,
  // where the same code runs in milliseconds. Falls back to dir().
  void UseMemoryDirectory() {
    std::string pattern = "/dev/shm/stormark-test-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) memory_dir_ = pattern;
  }
  const std::string& base() const { return memory_dir_.empty() ? dir() : memory_dir_; }

  std::unique_ptr<BonnieWorkload> Make(const BonnieSpec& spec, uint64_t ram = 4 * kMiB,
                                       const std::string& filesystem = "ext4") {
    const TargetConfig config{"scratch", "dir", base()};
    common::StatusOr<std::unique_ptr<Dir>> target = OpenPhaseDir(config, "phase1");
    EXPECT_TRUE(target.ok()) << target.status();
    if (!target.ok()) return nullptr;
    phase_dir_ = (*target)->Describe("");
    return std::make_unique<BonnieWorkload>(spec, std::move(*target), HostWithRam(ram), filesystem);
  }

  // Prepares and runs `workload`; the result holds what AddToResult adds.
  common::Status PrepareAndRun(BonnieWorkload& workload, PhaseResult* result) {
    std::vector<std::string> warnings;
    common::Status prepared = workload.Prepare(kNotCancelled, &warnings);
    if (!prepared.ok()) return prepared;
    common::Status status = RunIt(workload);
    workload.AddToResult(result);
    return status;
  }

  common::Status RunIt(BonnieWorkload& workload) {
    TimedRegion region(common::SystemClock(), recorders_);
    RunContext ctx{common::SystemClock(), cancelled_, recorders_, region};
    return workload.Run(ctx);
  }

  std::string memory_dir_;
  std::atomic<bool> cancelled_{false};
  common::RecorderSet recorders_{common::SystemClock().MonotonicNanos()};
  std::string phase_dir_;
};

TEST(BonnieSpecCheck, RefusesDirectWithAnUnalignedChunk) {
  BonnieSpec spec = SmallSpec();
  spec.set_chunk_size(6000);
  spec.set_size_bytes(6000 * 100);
  spec.set_direct(true);
  common::Status status = common::CheckBonnieSpec(spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("with direct, chunk must be a multiple of 4k"));
}

TEST(BonnieSpecCheck, RefusesASizeThatIsNotWholeChunks) {
  BonnieSpec spec = SmallSpec();
  spec.set_size_bytes(8 * kMiB + 100);
  common::Status status = common::CheckBonnieSpec(spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("is not a multiple of chunk 8k"));
}

TEST(BonnieSpecCheck, RefusesTooManySeekersAndDirectories) {
  BonnieSpec spec = SmallSpec();
  spec.set_seekers(5000);
  EXPECT_THAT(common::CheckBonnieSpec(spec).message(), HasSubstr("seekers 5000"));
  spec = SmallSpec();
  spec.set_file_dirs(100000);
  EXPECT_THAT(common::CheckBonnieSpec(spec).message(), HasSubstr("bonnie++'s limit of 99999"));
}

TEST(BonnieResolve, SizeZeroIsTwiceTheHostRam) {
  BonnieSpec spec;
  spec.set_files_k(0);
  common::StatusOr<BonnieParams> p = BonnieWorkload::Resolve(spec, 3 * kMiB);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->size_bytes, 6 * kMiB);
  EXPECT_EQ(p->ram_bytes, 3 * kMiB);
  EXPECT_EQ(p->chunk_size, 8192u);
  EXPECT_EQ(p->char_size_bytes, 6 * kMiB);  // bonnie++'s 20M, capped at the file size.
  EXPECT_EQ(p->seeks, 8192u);
  EXPECT_EQ(p->seekers, 5u);
}

TEST(BonnieResolve, SpecRamOverridesTheHostAndRoundsUpToAGibLikeBonnie) {
  BonnieSpec spec;
  spec.set_ram_bytes(300 * kMiB);  // 600M is over half a GiB: bonnie++ makes it 1G.
  common::StatusOr<BonnieParams> p = BonnieWorkload::Resolve(spec, 64 << 30);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->size_bytes, 1024 * kMiB);
  EXPECT_EQ(p->ram_bytes, 300 * kMiB);
}

TEST(BonnieResolve, SizeZeroWithUnknownRamFails) {
  BonnieSpec spec;
  common::StatusOr<BonnieParams> p = BonnieWorkload::Resolve(spec, 0);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("RAM is unknown"));
}

TEST(BonnieResolve, SkipCharAndSkipIo) {
  BonnieSpec spec = SmallSpec();
  spec.set_skip_char(true);
  common::StatusOr<BonnieParams> p = BonnieWorkload::Resolve(spec, kMiB);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->char_size_bytes, 0u);
  spec.set_skip_io(true);
  p = BonnieWorkload::Resolve(spec, kMiB);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->run_io);
  EXPECT_EQ(p->size_bytes, 0u);
  EXPECT_EQ(p->files, 1024u);
}

TEST_F(BonnieWorkloadTest, RunsEveryTestInBonnieOrderWithExactCounts) {
  auto workload = Make(SmallSpec());
  ASSERT_NE(workload, nullptr);
  PhaseResult result;
  common::Status status = PrepareAndRun(*workload, &result);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_THAT(Names(result), ElementsAreArray(kAllTests));

  const uint64_t size = 8 * kMiB;
  const uint64_t chunks = size / kChunk;
  for (const char* name : {"putc", "getc"}) {
    const Measurement& m = Find(result, name);
    EXPECT_EQ(m.bytes(), kMiB) << name;
    EXPECT_EQ(m.ops(), kMiB) << name;            // Characters.
    EXPECT_EQ(m.latency().count(), 1u) << name;  // One value per MiB.
  }
  for (const char* name : {"put_block", "rewrite", "get_block"}) {
    const Measurement& m = Find(result, name);
    EXPECT_EQ(m.bytes(), size) << name;
    EXPECT_EQ(m.ops(), chunks) << name;
    EXPECT_EQ(m.latency().count(), chunks) << name;
  }
  const Measurement& seeks = Find(result, "seeks");
  EXPECT_EQ(seeks.ops(), 200u);
  EXPECT_EQ(seeks.latency().count(), 200u);
  EXPECT_GT(seeks.bytes(), 200 * kChunk);  // About one seek in ten writes its chunk back.
  EXPECT_LT(seeks.bytes(), 2 * 200 * kChunk);
  for (const char* name :
       {"seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del"}) {
    const Measurement& m = Find(result, name);
    EXPECT_EQ(m.ops(), 1024u) << name;
    EXPECT_EQ(m.bytes(), 0u) << name;  // 0:0 makes empty files.
    EXPECT_EQ(m.latency().count(), 1024u) << name;
  }
  uint64_t bytes = 0;
  for (const Measurement& m : result.measurements()) {
    EXPECT_FALSE(m.skipped()) << m.name();
    EXPECT_GT(m.elapsed_nanos(), 0) << m.name();
    EXPECT_EQ(m.too_fast(), m.elapsed_nanos() < 500'000'000) << m.name();
    EXPECT_GT(m.latency().max(), 0u) << m.name();
    bytes += m.bytes();
  }
  // The recorders hold every operation, so the phase totals add the tests up; the
  // per-character tests count one operation per MiB there.
  EXPECT_EQ(recorders_.TotalBytes(), bytes);
  EXPECT_EQ(recorders_.TotalOps(), 1 + chunks * 3 + 1 + 200 + 6 * 1024);

  EXPECT_EQ(result.resolved().at("size_bytes"), "8388608");
  EXPECT_EQ(result.resolved().at("chunk_size"), "8192");
  EXPECT_EQ(result.resolved().at("char_size_bytes"), "1048576");
  EXPECT_EQ(result.resolved().at("seed"), "42");
  EXPECT_EQ(result.resolved().at("files_k"), "1");
  EXPECT_EQ(result.resolved().at("seeks"), "200");
  EXPECT_EQ(result.resolved().at("seekers"), "5");

  // The run removed its data file and test directory, as bonnie++ does.
  EXPECT_THAT(ListDir(phase_dir_), IsEmpty());
  EXPECT_EQ(workload->Cleanup().removed, 1);  // The phase directory.
  EXPECT_THAT(ListDir(base()), IsEmpty());
}

TEST_F(BonnieWorkloadTest, FilesWithDataAreReadBackAcrossDirectories) {
  UseMemoryDirectory();
  BonnieSpec spec = SmallSpec();
  spec.set_skip_io(true);
  spec.set_file_max_bytes(1024);
  spec.set_file_min_bytes(0);
  spec.set_file_dirs(3);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  PhaseResult result;
  common::Status status = PrepareAndRun(*workload, &result);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_THAT(Names(result), ElementsAreArray(kAllTests));
  const Measurement& created = Find(result, "seq_create");
  EXPECT_GT(created.bytes(), 0u);
  EXPECT_LE(created.bytes(), 1024u * 1024u);
  EXPECT_EQ(Find(result, "seq_stat").bytes(), created.bytes());
  EXPECT_EQ(Find(result, "ran_stat").bytes(), Find(result, "ran_create").bytes());
  EXPECT_EQ(Find(result, "seq_del").ops(), 1024u);
  EXPECT_EQ(Find(result, "ran_del").ops(), 1024u);
  EXPECT_EQ(result.resolved().at("file_dirs"), "3");
  EXPECT_EQ(result.resolved().at("file_max_bytes"), "1024");
  EXPECT_THAT(ListDir(phase_dir_), IsEmpty());
}

TEST_F(BonnieWorkloadTest, FsyncEveryWriteRunsTheSameTests) {
  UseMemoryDirectory();
  BonnieSpec spec = SmallSpec();
  spec.set_size_bytes(kMiB);
  spec.set_skip_char(true);
  spec.set_seeks(50);
  spec.set_fsync_every_write(true);
  spec.set_file_dirs(2);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  PhaseResult result;
  common::Status status = PrepareAndRun(*workload, &result);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Find(result, "seeks").ops(), 50u);
  EXPECT_EQ(Find(result, "ran_create").ops(), 1024u);
}

TEST_F(BonnieWorkloadTest, SkippedTestsAreStillListed) {
  BonnieSpec spec = SmallSpec();
  spec.set_skip_char(true);
  spec.set_files_k(0);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  PhaseResult result;
  ASSERT_TRUE(PrepareAndRun(*workload, &result).ok());
  ASSERT_THAT(Names(result), ElementsAreArray(kAllTests));
  std::vector<std::string> skipped;
  for (const Measurement& m : result.measurements()) {
    if (m.skipped()) {
      skipped.push_back(m.name());
      EXPECT_EQ(m.ops(), 0u);
    }
  }
  EXPECT_THAT(skipped, ElementsAre("putc", "getc", "seq_create", "seq_stat", "seq_del",
                                   "ran_create", "ran_stat", "ran_del"));
  EXPECT_EQ(Find(result, "put_block").bytes(), 8 * kMiB);
  EXPECT_EQ(result.resolved().at("char_size_bytes"), "0");
}

TEST_F(BonnieWorkloadTest, SkipIoSkipsTheSixIoTests) {
  UseMemoryDirectory();
  BonnieSpec spec = SmallSpec();
  spec.set_skip_io(true);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  PhaseResult result;
  ASSERT_TRUE(PrepareAndRun(*workload, &result).ok());
  ASSERT_THAT(Names(result), ElementsAreArray(kAllTests));
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(result.measurements(i).skipped(), i < 6) << result.measurements(i).name();
  }
}

TEST_F(BonnieWorkloadTest, SizeZeroResolvesToTwiceRam) {
  BonnieSpec spec = SmallSpec();
  spec.set_size_bytes(0);
  spec.set_files_k(0);
  auto workload = Make(spec, /*ram=*/2 * kMiB);
  ASSERT_NE(workload, nullptr);
  PhaseResult result;
  common::Status status = PrepareAndRun(*workload, &result);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(result.resolved().at("size_bytes"), "4194304");
  EXPECT_EQ(result.resolved().at("ram_bytes"), "2097152");
  EXPECT_EQ(Find(result, "put_block").bytes(), 4 * kMiB);
}

TEST_F(BonnieWorkloadTest, SeedZeroPicksOneAndReportsIt) {
  UseMemoryDirectory();
  BonnieSpec spec = SmallSpec();
  spec.set_seed(0);
  spec.set_skip_io(true);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  PhaseResult result;
  ASSERT_TRUE(PrepareAndRun(*workload, &result).ok());
  EXPECT_NE(result.resolved().at("seed"), "0");
}

TEST_F(BonnieWorkloadTest, WarnsWhenTheFileIsUnderTwiceRam) {
  auto workload = Make(SmallSpec(), /*ram=*/kMiB << 10, "tmpfs");
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(
      warnings,
      Contains(HasSubstr("possibly cache-dominated: size 8 MiB is under 2x RAM (RAM is 1 GiB) and "
                         "direct is off")));
  EXPECT_THAT(warnings, Contains(HasSubstr("is on tmpfs")));
}

TEST_F(BonnieWorkloadTest, ARamBelowTheHostsIsNotTrustedForTheCacheWarning) {
  // `ram` 2 MiB sizes the 8 MiB file to 4x "RAM", but the host's 1 GiB caches all of it.
  BonnieSpec spec = SmallSpec();
  spec.set_ram_bytes(2 * kMiB);
  auto workload = Make(spec, /*ram=*/kMiB << 10);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, Contains(HasSubstr("possibly cache-dominated: size 8 MiB is under 2x RAM "
                                           "(this host's RAM is 1 GiB; ram was set to 2 MiB)")));
}

TEST_F(BonnieWorkloadTest, NoCacheWarningAtTwiceRam) {
  auto workload = Make(SmallSpec(), /*ram=*/4 * kMiB);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(warnings, Not(Contains(HasSubstr("cache-dominated"))));
}

TEST_F(BonnieWorkloadTest, PrepareRefusesMoreThanTheFreeSpace) {
  BonnieSpec spec = SmallSpec();
  spec.set_size_bytes(uint64_t{1} << 60);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  common::Status status = workload->Prepare(kNotCancelled, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(status.message(), HasSubstr("target 'scratch' has"));
  EXPECT_THAT(status.message(), HasSubstr("needs 1 EiB"));
  EXPECT_THAT(ListDir(phase_dir_), IsEmpty());
}

TEST_F(BonnieWorkloadTest, PrepareCountsTheFileTestsAgainstTheFreeSpace) {
  BonnieSpec spec = SmallSpec();
  spec.set_skip_io(true);
  spec.set_files_k(1024);
  spec.set_file_max_bytes(uint64_t{1} << 62);  // Overflows 64 bits times the file count.
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  common::Status status = workload->Prepare(kNotCancelled, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
}

TEST_F(BonnieWorkloadTest, PrepareStopsWhenCancelled) {
  auto workload = Make(SmallSpec());
  ASSERT_NE(workload, nullptr);
  const std::atomic<bool> cancelled{true};
  std::vector<std::string> warnings;
  EXPECT_EQ(workload->Prepare(cancelled, &warnings).code(), absl::StatusCode::kCancelled);
}

TEST_F(BonnieWorkloadTest, CancelDuringTheIoTestsStopsAndCleansUp) {
  BonnieSpec spec = SmallSpec();
  spec.set_size_bytes(64 * kMiB);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  std::thread canceller([&] {
    while (recorders_.TotalBytes() < 16 * kMiB) std::this_thread::yield();
    cancelled_ = true;
  });
  common::Status status = RunIt(*workload);
  canceller.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  PhaseResult result;
  workload->AddToResult(&result);
  EXPECT_LT(result.measurements_size(), 12);
  EXPECT_THAT(ListDir(phase_dir_), ElementsAre("bonnie.data"));
  workload->Cleanup();
  EXPECT_THAT(ListDir(base()), IsEmpty());
}

TEST_F(BonnieWorkloadTest, CancelDuringTheFileTestsStopsAndCleansUp) {
  UseMemoryDirectory();
  BonnieSpec spec = SmallSpec();
  spec.set_skip_io(true);
  spec.set_files_k(2);
  spec.set_file_dirs(4);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  std::thread canceller([&] {
    // Part-way through seq_stat: the files exist.
    while (recorders_.TotalOps() < 2048 + 100) std::this_thread::yield();
    cancelled_ = true;
  });
  common::Status status = RunIt(*workload);
  canceller.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  const int left = CountEntries(phase_dir_);
  EXPECT_GT(left, 4);  // files/, 00000..00003/ and the files not yet deleted.
  EXPECT_EQ(workload->Cleanup().removed, left + 1);
  EXPECT_THAT(ListDir(base()), IsEmpty());
}

TEST_F(BonnieWorkloadTest, DestructorRemovesEverything) {
  {
    BonnieSpec spec = SmallSpec();
    auto workload = Make(spec);
    ASSERT_NE(workload, nullptr);
    std::vector<std::string> warnings;
    ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
    EXPECT_THAT(ListDir(phase_dir_), ElementsAre("bonnie.data"));
  }
  EXPECT_THAT(ListDir(base()), IsEmpty());
}

TEST_F(BonnieWorkloadTest, ADeletedFileIsAnErrorAndCleanupStillWorks) {
  BonnieSpec spec = SmallSpec();
  spec.set_skip_char(true);
  spec.set_files_k(0);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  std::vector<std::string> warnings;
  ASSERT_TRUE(workload->Prepare(kNotCancelled, &warnings).ok());
  std::thread saboteur([&] {
    // Truncate the file behind the workload's back once put_block has finished.
    while (recorders_.TotalOps() < 8 * kMiB / kChunk + 10) std::this_thread::yield();
    EXPECT_EQ(truncate((phase_dir_ + "/bonnie.data").c_str(), kMiB), 0);
  });
  common::Status status = RunIt(*workload);
  saboteur.join();
  EXPECT_FALSE(status.ok());
  workload->Cleanup();
  EXPECT_THAT(ListDir(base()), IsEmpty());
}

TEST_F(BonnieWorkloadTest, DirectRunsTheBlockTestsWithExactBytes) {
  BonnieSpec spec = SmallSpec();
  spec.set_direct(true);
  spec.set_files_k(0);
  auto workload = Make(spec);
  ASSERT_NE(workload, nullptr);
  PhaseResult result;
  common::Status status = PrepareAndRun(*workload, &result);
  if (absl::IsInvalidArgument(status) && status.message().find("O_DIRECT") != std::string::npos) {
    GTEST_SKIP() << status;
  }
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Find(result, "put_block").bytes(), 8 * kMiB);
  EXPECT_EQ(Find(result, "rewrite").bytes(), 8 * kMiB);
  EXPECT_EQ(Find(result, "get_block").bytes(), 8 * kMiB);
  EXPECT_EQ(Find(result, "seeks").ops(), 200u);
  EXPECT_EQ(Find(result, "getc").bytes(), kMiB);
}

TEST_F(BonnieWorkloadTest, TheFactoryBuildsABonniePhase) {
  stormark::v1::PhaseSpec phase;
  phase.set_phase_id("b1");
  phase.set_target("scratch");
  *phase.mutable_bonnie() = SmallSpec();
  phase.mutable_bonnie()->set_skip_io(true);
  common::StatusOr<std::unique_ptr<Workload>> workload =
      MakeWorkload(phase, ConfigWithTarget(), HostWithRam(kMiB));
  ASSERT_TRUE(workload.ok()) << workload.status();
  std::vector<std::string> warnings;
  EXPECT_TRUE((*workload)->Prepare(kNotCancelled, &warnings).ok());
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-b1"));
  (*workload)->Cleanup();
  EXPECT_THAT(ListDir(dir()), IsEmpty());

  phase.mutable_bonnie()->set_file_min_bytes(2);
  phase.mutable_bonnie()->set_file_max_bytes(1);
  EXPECT_EQ(MakeWorkload(phase, ConfigWithTarget(), HostWithRam(kMiB)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// --- Error paths, on a Dir in memory with faults: no disk, no root. ---

class BonnieFaultTest : public ::testing::Test {
 protected:
  // A workload on memory_, through a FaultDir with `faults`.
  std::unique_ptr<BonnieWorkload> Make(const BonnieSpec& spec, DirFaults faults) {
    auto dir = std::make_unique<FaultDir>(&memory_, faults);
    faults_ = dir.get();
    return std::make_unique<BonnieWorkload>(spec, std::move(dir), HostWithRam(4 * kMiB), "ext4");
  }
  common::Status PrepareAndRun(BonnieWorkload& workload, PhaseResult* result) {
    std::vector<std::string> warnings;
    RETURN_IF_ERROR(workload.Prepare(kNotCancelled, &warnings));
    TimedRegion region(common::SystemClock(), recorders_);
    RunContext ctx{common::SystemClock(), cancelled_, recorders_, region};
    common::Status status = workload.Run(ctx);
    workload.AddToResult(result);
    return status;
  }

  MemoryDir memory_{"scratch"};
  FaultDir* faults_ = nullptr;
  std::atomic<bool> cancelled_{false};
  common::RecorderSet recorders_{common::SystemClock().MonotonicNanos()};
};

TEST_F(BonnieFaultTest, EveryTestRunsOnAMemoryDirWithExactCounts) {
  auto workload = Make(SmallSpec(), DirFaults{});
  PhaseResult result;
  const common::Status status = PrepareAndRun(*workload, &result);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_THAT(Names(result), ElementsAreArray(kAllTests));
  EXPECT_EQ(Find(result, "put_block").bytes(), 8 * kMiB);
  EXPECT_EQ(Find(result, "seq_create").ops(), 1024u);
  EXPECT_EQ(Find(result, "ran_del").ops(), 1024u);
  EXPECT_THAT(memory_.Names(), IsEmpty());  // The run removed what it made, as bonnie++ does.
}

TEST_F(BonnieFaultTest, ShortWritesAreCompletedNotLost) {
  DirFaults faults;
  faults.max_write_bytes = 1000;  // Not a divisor of the chunk or of stdio's buffer.
  BonnieSpec spec = SmallSpec();
  spec.set_file_max_bytes(10000);
  spec.set_file_min_bytes(5000);
  auto workload = Make(spec, faults);
  PhaseResult result;
  const common::Status status = PrepareAndRun(*workload, &result);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(Find(result, "putc").bytes(), kMiB);
  EXPECT_EQ(Find(result, "put_block").bytes(), 8 * kMiB);
  EXPECT_EQ(Find(result, "rewrite").bytes(), 8 * kMiB);
  // Everything read back had been written whole: seq_stat read what seq_create wrote.
  EXPECT_EQ(Find(result, "seq_stat").bytes(), Find(result, "seq_create").bytes());
  EXPECT_GT(Find(result, "seq_create").bytes(), 1024u * 5000);
}

TEST_F(BonnieFaultTest, AFullDiskAtCreateFailsThePhaseNamingTheFile) {
  DirFaults faults;
  faults.create_errno = ENOSPC;
  faults.creates_before_error = 100;
  BonnieSpec spec = SmallSpec();
  spec.set_skip_io(true);
  auto workload = Make(spec, faults);
  PhaseResult result;
  const common::Status status = PrepareAndRun(*workload, &result);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(status.message(), HasSubstr("target 'scratch': cannot create memory:files/"));
  EXPECT_THAT(status.message(), HasSubstr("No space left on device"));
  EXPECT_FALSE(memory_.Names().empty());  // The 100 files and the directory, until cleanup.
  EXPECT_EQ(workload->Cleanup().removed, 101);
  EXPECT_THAT(memory_.Names(), IsEmpty());
}

TEST_F(BonnieFaultTest, AnFsyncErrorFailsTheFirstTestThatSyncs) {
  DirFaults faults;
  faults.sync_errno = EIO;
  auto workload = Make(SmallSpec(), faults);
  PhaseResult result;
  const common::Status status = PrepareAndRun(*workload, &result);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("bonnie putc: fsync: Input/output error"));
  workload->Cleanup();
  EXPECT_THAT(memory_.Names(), IsEmpty());
}

TEST_F(BonnieFaultTest, AWriteErrorMidTestFailsItThroughStdioAndThroughWrite) {
  for (const uint64_t after : {uint64_t{100'000}, uint64_t{kMiB + 3 * kChunk}}) {
    DirFaults faults;
    faults.write_errno = ENOSPC;
    faults.bytes_before_write_error = after;
    MemoryDir fresh("scratch");
    auto dir = std::make_unique<FaultDir>(&fresh, faults);
    BonnieWorkload workload(SmallSpec(), std::move(dir), HostWithRam(4 * kMiB), "ext4");
    PhaseResult result;
    const common::Status status = PrepareAndRun(workload, &result);
    ASSERT_FALSE(status.ok()) << after;
    // Within putc's first MiB: stdio's buffered write; past it, put_block's write(2).
    EXPECT_THAT(status.message(), HasSubstr(after < kMiB ? "bonnie putc" : "bonnie put_block"))
        << status;
    EXPECT_THAT(status.message(), HasSubstr("No space left on device")) << status;
    workload.Cleanup();
    EXPECT_THAT(fresh.Names(), IsEmpty());
  }
}

}  // namespace
}  // namespace stormark::agent
