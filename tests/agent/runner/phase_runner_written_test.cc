// The phase runner's memory of what its phases wrote on a target (agent/targets/
// written_prefix.h), seen through a block target on a file: a stream read after a write of the
// same bytes is not laid out again, and a command phase makes it lay out again.
#include <unistd.h>

#include <fstream>
#include <string>

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
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kMiB = 1 << 20;
const std::string kMarker(4096, '\xab');

PhaseSpec StreamPhase(const std::string& phase_id, StreamSpec::Direction direction, uint64_t size) {
  PhaseSpec spec;
  spec.set_phase_id(phase_id);
  spec.set_target("img");
  StreamSpec* stream = spec.mutable_stream();
  stream->set_direction(direction);
  stream->set_size_bytes(size);
  stream->set_block_size(256 * 1024);
  stream->set_fdatasync(direction == StreamSpec::WRITE);
  return spec;
}

class PhaseRunnerWrittenTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    image_ = dir() + "/img.img";
    // Sparse, as a fresh image is: a read lays out unless the agent wrote it.
    std::ofstream(image_, std::ios::binary).close();
    EXPECT_EQ(truncate(image_.c_str(), static_cast<off_t>(16 * kMiB)), 0);
    AgentConfig config = ConfigWithTarget();
    TargetConfig target;
    target.name = "img";
    target.kind = "block";
    target.path = image_;
    target.disposable = true;
    config.targets.push_back(target);
    config.commands.enabled = true;
    // The hooks punch holes in the test's own image (as root: root's).
    config.commands.user = geteuid() == 0 ? "root" : "";
    HostFacts host;
    host.ram_bytes = uint64_t{64} << 30;
    runner_ = std::make_unique<PhaseRunner>(config, host, common::SystemClock());
  }

  void TearDown() override {
    runner_.reset();
    TempDirTest::TearDown();
  }

  // Prepares, runs and cleans up `spec`; returns its result.
  PhaseResult RunPhase(const PhaseSpec& spec) {
    Identity caller;
    caller.name = "CN=controller";
    auto prepared = runner_->Prepare(spec, caller);
    EXPECT_TRUE(prepared.ok()) << prepared.status();
    const std::string token = prepared.ok() ? prepared->phase_token() : "";
    stormark::v1::RunRequest request;
    request.set_phase_id(spec.phase_id());
    request.set_phase_token(token);
    request.set_start_at_unix_nanos(common::SystemClock().NowUnixNanos());
    auto result = runner_->Run(
        request, caller, [](const auto&) { return true; }, [] { return false; });
    EXPECT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(runner_->Cleanup(spec.phase_id(), token, caller).ok());
    return result.ok() ? *result : PhaseResult();
  }

  // Puts kMarker at `offset` of the image, where a layout would overwrite it.
  void PutMarker(uint64_t offset) {
    std::fstream file(image_, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(offset));
    file.write(kMarker.data(), static_cast<std::streamsize>(kMarker.size()));
  }

  bool MarkerAt(uint64_t offset) const {
    std::ifstream file(image_, std::ios::binary);
    file.seekg(static_cast<std::streamoff>(offset));
    std::string data(kMarker.size(), '\0');
    file.read(data.data(), static_cast<std::streamsize>(data.size()));
    return data == kMarker;
  }

  std::string image_;
  std::unique_ptr<PhaseRunner> runner_;
};

const auto kNoLayout = AllOf(HasSubstr("no layout"), HasSubstr("target 'img'"));

TEST_F(PhaseRunnerWrittenTest, ReadOfBytesAnEarlierPhaseWroteIsNotLaidOutAgain) {
  EXPECT_EQ(RunPhase(StreamPhase("seq-write", StreamSpec::WRITE, 4 * kMiB)).state(),
            PhaseResult::SUCCEEDED);
  PutMarker(kMiB);
  const PhaseResult read = RunPhase(StreamPhase("seq-read", StreamSpec::READ, 4 * kMiB));
  EXPECT_EQ(read.state(), PhaseResult::SUCCEEDED) << read.error();
  EXPECT_EQ(read.bytes(), 4 * kMiB);
  EXPECT_THAT(read.warnings(), Contains(AllOf(kNoLayout, HasSubstr("phase 'seq-write'"))));
  EXPECT_TRUE(MarkerAt(kMiB));  // Not written over.
}

TEST_F(PhaseRunnerWrittenTest, ReadBeyondWhatWasWrittenIsLaidOutAndThenRemembered) {
  RunPhase(StreamPhase("seq-write", StreamSpec::WRITE, 4 * kMiB));
  PutMarker(kMiB);
  const PhaseResult first = RunPhase(StreamPhase("read-8m", StreamSpec::READ, 8 * kMiB));
  EXPECT_THAT(first.warnings(), Not(Contains(kNoLayout)));
  EXPECT_FALSE(MarkerAt(kMiB));
  // Its layout counts as written: the next read of as much is not laid out.
  PutMarker(kMiB);
  const PhaseResult second = RunPhase(StreamPhase("read-again", StreamSpec::READ, 8 * kMiB));
  EXPECT_THAT(second.warnings(), Contains(AllOf(kNoLayout, HasSubstr("phase 'read-8m'"))));
  EXPECT_TRUE(MarkerAt(kMiB));
}

TEST_F(PhaseRunnerWrittenTest, ACommandPhaseMakesTheNextReadLayOutAgain) {
  RunPhase(StreamPhase("seq-write", StreamSpec::WRITE, 4 * kMiB));
  // A hook that discards part of what was written (on a file, a punched hole).
  PhaseSpec hook;
  hook.set_phase_id("discard");
  hook.set_target("img");
  for (const char* arg : {"fallocate", "--punch-hole", "--offset", "0", "--length", "1MiB"}) {
    hook.mutable_command()->add_argv(arg);
  }
  hook.mutable_command()->add_argv(image_);
  hook.mutable_command()->set_hook(true);
  EXPECT_EQ(RunPhase(hook).state(), PhaseResult::SUCCEEDED);
  PutMarker(kMiB);
  const PhaseResult read = RunPhase(StreamPhase("seq-read", StreamSpec::READ, 4 * kMiB));
  EXPECT_THAT(read.warnings(), Not(Contains(HasSubstr("no layout"))));
  EXPECT_FALSE(MarkerAt(kMiB));
}

TEST_F(PhaseRunnerWrittenTest, AFileHoldingDataAllThroughIsNotLaidOutAfterACommandEither) {
  // The memory of writes is gone after a command, but a file's filesystem can still tell.
  RunPhase(StreamPhase("seq-write", StreamSpec::WRITE, 4 * kMiB));
  PhaseSpec hook;
  hook.set_phase_id("noop");
  hook.set_target("img");
  hook.mutable_command()->add_argv("true");
  hook.mutable_command()->set_hook(true);
  EXPECT_EQ(RunPhase(hook).state(), PhaseResult::SUCCEEDED);
  PutMarker(kMiB);
  const PhaseResult read = RunPhase(StreamPhase("seq-read", StreamSpec::READ, 4 * kMiB));
  EXPECT_THAT(read.warnings(), Contains(HasSubstr("holds data all through")));
  EXPECT_TRUE(MarkerAt(kMiB));
}

TEST_F(PhaseRunnerWrittenTest, AReadLaysOutWhenTheTargetsFileWasReplaced) {
  RunPhase(StreamPhase("seq-write", StreamSpec::WRITE, 4 * kMiB));
  const std::string replacement = image_ + ".new";
  std::ofstream(replacement, std::ios::binary).close();
  ASSERT_EQ(truncate(replacement.c_str(), static_cast<off_t>(16 * kMiB)), 0);
  ASSERT_EQ(std::rename(replacement.c_str(), image_.c_str()), 0);
  PutMarker(kMiB);
  const PhaseResult read = RunPhase(StreamPhase("seq-read", StreamSpec::READ, 4 * kMiB));
  EXPECT_THAT(read.warnings(), Not(Contains(kNoLayout)));
  EXPECT_FALSE(MarkerAt(kMiB));
}

}  // namespace
}  // namespace stormark::agent
