// A write phase that hands its file over to the next phase (PhaseSpec.hand_over_to): the read
// reads that very file, nothing is laid out twice, and a file nobody came for is removed.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "agent/runner/phase_runner.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using stormark::v1::PhaseResult;
using stormark::v1::PhaseSpec;
using stormark::v1::StreamSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uint64_t kMiB = 1 << 20;

PhaseSpec StreamPhase(const std::string& phase_id, StreamSpec::Direction direction,
                      uint64_t size = 2 * kMiB) {
  PhaseSpec spec;
  spec.set_phase_id(phase_id);
  spec.set_target("scratch");
  spec.set_progress_interval_ms(10);
  StreamSpec* stream = spec.mutable_stream();
  stream->set_direction(direction);
  stream->set_size_bytes(size);
  stream->set_block_size(64 * 1024);
  stream->set_fdatasync(direction == StreamSpec::WRITE);
  return spec;
}

PhaseSpec Writer(const std::string& phase_id, const std::string& hand_over_to,
                 uint64_t size = 2 * kMiB) {
  PhaseSpec spec = StreamPhase(phase_id, StreamSpec::WRITE, size);
  spec.set_hand_over_to(hand_over_to);
  return spec;
}

bool KeepListening(const stormark::v1::RunUpdate::Progress&) { return true; }
bool StillHere() { return false; }

Identity Named(const std::string& name) {
  Identity id;
  id.name = name;
  return id;
}

class HandOverTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    Start(PhaseRunner::kDefaultReclaimAfterNanos);
  }
  void TearDown() override {
    runner_.reset();
    TempDirTest::TearDown();
  }
  void Start(int64_t reclaim_after_nanos) {
    runner_.reset();
    HostFacts host;
    host.hostname = "testhost";
    host.ram_bytes = uint64_t{64} << 30;
    runner_ = std::make_unique<PhaseRunner>(ConfigWithTarget(), host, common::SystemClock(),
                                            reclaim_after_nanos);
  }

  // Prepares, runs and cleans up `spec` as `caller`; returns the result (with Prepare's
  // warnings in it).
  PhaseResult RunPhase(const PhaseSpec& spec, const Identity& caller) {
    auto reply = runner_->Prepare(spec, caller);
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return PhaseResult();
    stormark::v1::RunRequest request;
    request.set_phase_id(spec.phase_id());
    request.set_phase_token(reply->phase_token());
    request.set_start_at_unix_nanos(common::SystemClock().NowUnixNanos());
    auto result = runner_->Run(request, caller, KeepListening, StillHere);
    EXPECT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(runner_->Cleanup(spec.phase_id(), reply->phase_token(), caller).ok());
    return result.ok() ? *result : PhaseResult();
  }

  off_t SizeOf(const std::string& path) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0 ? st.st_size : -1;
  }

  const Identity controller_ = Named("CN=controller");
  std::unique_ptr<PhaseRunner> runner_;
};

TEST_F(HandOverTest, TheReadReadsTheFileTheWriteWroteAndRemovesIt) {
  PhaseResult wrote = RunPhase(Writer("run-1", "run-2"), controller_);
  ASSERT_EQ(wrote.state(), PhaseResult::SUCCEEDED) << wrote.error();
  // Kept past the writer's Cleanup, in the writer's own phase directory, and nothing else.
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-run-1"));
  EXPECT_EQ(SizeOf(dir() + "/.stormark-run-1/stream.dat"), static_cast<off_t>(2 * kMiB));

  auto reply = runner_->Prepare(StreamPhase("run-2", StreamSpec::READ), controller_);
  ASSERT_TRUE(reply.ok()) << reply.status();
  // Nothing that qualifies the figure: the file was flushed and evicted.
  EXPECT_THAT(reply->warnings(), IsEmpty());
  // No second file: the read has no phase directory of its own.
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-run-1"));
  stormark::v1::RunRequest request;
  request.set_phase_id("run-2");
  request.set_phase_token(reply->phase_token());
  auto read = runner_->Run(request, controller_, KeepListening, StillHere);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->state(), PhaseResult::SUCCEEDED) << read->error();
  EXPECT_EQ(read->bytes(), 2 * kMiB);
  EXPECT_EQ(read->resolved().at("data"),
            "the file phase 'run-1' (stream write) wrote just before, flushed and evicted from "
            "the cache");
  ASSERT_TRUE(runner_->Cleanup("run-2", reply->phase_token(), controller_).ok());
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(HandOverTest, WithoutTheRequestNothingIsKept) {
  RunPhase(StreamPhase("run-1", StreamSpec::WRITE), controller_);
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  auto reply = runner_->Prepare(StreamPhase("run-2", StreamSpec::READ), controller_);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-run-2"));  // Laid out anew.
}

TEST_F(HandOverTest, AnotherPhaseRemovesTheKeptFileFirst) {
  RunPhase(Writer("run-1", "run-2"), controller_);
  ASSERT_THAT(ListDir(dir()), ElementsAre(".stormark-run-1"));
  auto reply = runner_->Prepare(StreamPhase("run-9", StreamSpec::READ), controller_);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-run-9"));
}

TEST_F(HandOverTest, AnotherIdentityNeverGetsTheFile) {
  RunPhase(Writer("run-1", "run-2"), controller_);
  // The right phase id from someone else: not handed over, and removed.
  auto reply = runner_->Prepare(StreamPhase("run-2", StreamSpec::READ), Named("CN=intruder"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-run-2"));
}

TEST_F(HandOverTest, AReadLargerThanTheWriteLaysOutItsOwn) {
  RunPhase(Writer("run-1", "run-2", 1 * kMiB), controller_);
  auto reply = runner_->Prepare(StreamPhase("run-2", StreamSpec::READ, 2 * kMiB), controller_);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-run-2"));
}

TEST_F(HandOverTest, AnAbortedWriteHandsNothingOver) {
  auto reply = runner_->Prepare(Writer("run-1", "run-2", 64 * kMiB), controller_);
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_TRUE(runner_->Abort("run-1", reply->phase_token(), controller_).ok());
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(HandOverTest, AFileNobodyCameForIsReclaimed) {
  Start(/*reclaim_after_nanos=*/50'000'000);
  RunPhase(Writer("run-1", "run-2"), controller_);
  ASSERT_THAT(ListDir(dir()), ElementsAre(".stormark-run-1"));
  EXPECT_EQ(runner_->ReclaimKept(), "");  // Too soon.
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_THAT(runner_->ReclaimKept(),
              HasSubstr("removed the file phase 'run-1' kept for phase 'run-2' on target "
                        "'scratch': nothing came for it in"));
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(HandOverTest, HeartbeatsOfItsControllerKeepIt) {
  Start(/*reclaim_after_nanos=*/0);
  PhaseSpec writer = Writer("run-1", "run-2");
  writer.set_heartbeat_timeout_ms(200);
  RunPhase(writer, controller_);
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(runner_->Heartbeat("", "", controller_).ok());
    EXPECT_EQ(runner_->ReclaimKept(), "");
  }
  // Someone else's heartbeats do not.
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(runner_->Heartbeat("", "", Named("CN=other")).ok());
  }
  EXPECT_THAT(runner_->ReclaimKept(), HasSubstr("removed the file phase 'run-1'"));
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(HandOverTest, TheAgentStoppingRemovesIt) {
  RunPhase(Writer("run-1", "run-2"), controller_);
  ASSERT_THAT(ListDir(dir()), ElementsAre(".stormark-run-1"));
  runner_->Shutdown();
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

// Attack: between the phases, the kept file is swapped for a link to a file outside the
// target. The read refuses it, and the outside file is neither read as the data nor removed.
TEST_F(HandOverTest, AKeptFileSwappedForALinkIsRefusedAndTheLinkedFileUntouched) {
  const std::string outside = dir() + "-outside";
  { std::ofstream(outside) << "the admin's data\n"; }
  RunPhase(Writer("run-1", "run-2"), controller_);
  const std::string kept = dir() + "/.stormark-run-1/stream.dat";
  ASSERT_EQ(unlink(kept.c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), kept.c_str()), 0);
  auto reply = runner_->Prepare(StreamPhase("run-2", StreamSpec::READ), controller_);
  EXPECT_FALSE(reply.ok());
  std::ifstream in(outside);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "the admin's data");
  unlink(kept.c_str());  // The link: the agent removes only what it created.
  rmdir((dir() + "/.stormark-run-1").c_str());
  unlink(outside.c_str());
}

// Attack: between the phases, the writer's phase directory is moved away and a link to a
// directory outside the target, holding a stream.dat of its own, is put in its place. The read
// reaches the kept file through the directory's descriptor, never by its name: it reads the
// writer's data, leaves the outside tree untouched, and removes nothing through the link.
TEST_F(HandOverTest, APhaseDirectorySwappedForALinkIsNotFollowed) {
  const std::string outside = dir() + "-elsewhere";
  ASSERT_EQ(mkdir(outside.c_str(), 0700), 0);
  { std::ofstream(outside + "/stream.dat") << "the admin's data\n"; }
  RunPhase(Writer("run-1", "run-2"), controller_);
  const std::string phase_dir = dir() + "/.stormark-run-1";
  const std::string moved = dir() + "/moved";
  ASSERT_EQ(rename(phase_dir.c_str(), moved.c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), phase_dir.c_str()), 0);
  PhaseResult read = RunPhase(StreamPhase("run-2", StreamSpec::READ), controller_);
  EXPECT_EQ(read.state(), PhaseResult::SUCCEEDED) << read.error();
  EXPECT_EQ(read.bytes(), 2 * kMiB);  // The writer's 2 MiB, not the outside file's 17 bytes.
  std::ifstream in(outside + "/stream.dat");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "the admin's data");
  EXPECT_EQ(SizeOf(phase_dir), static_cast<off_t>(outside.size()));  // Still the link.
  unlink(phase_dir.c_str());
  unlink((moved + "/stream.dat").c_str());
  rmdir(moved.c_str());
  unlink((outside + "/stream.dat").c_str());
  rmdir(outside.c_str());
}

}  // namespace
}  // namespace stormark::agent
