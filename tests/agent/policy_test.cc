#include "agent/policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "agent/config.h"
#include "agent/sysinfo.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kMiB = 1 << 20;

class PolicyTest : public TempDirTest {
 protected:
  // Parses `yaml` as "agent.yaml", with every "$DIR" replaced by the test's directory.
  common::StatusOr<AgentConfig> Parse(std::string yaml) {
    for (size_t at = yaml.find("$DIR"); at != std::string::npos; at = yaml.find("$DIR")) {
      yaml.replace(at, 4, dir());
    }
    return ParseAgentConfig(yaml, "agent.yaml");
  }

  void MakeDir(const std::string& name) {
    ASSERT_EQ(mkdir(common::StrCat(dir(), "/", name).c_str(), 0700), 0) << name;
  }

  AgentConfig Capped(uint64_t max_size, int64_t max_runtime) const {
    AgentConfig config = ConfigWithTarget();
    config.limits.max_size_bytes = max_size;
    config.limits.max_runtime_nanos = max_runtime;
    return config;
  }

  static stormark::v1::PhaseSpec Spec() {
    stormark::v1::PhaseSpec spec;
    spec.set_phase_id("p1");
    spec.set_target("scratch");
    return spec;
  }

  HostFacts host_;
};

TEST_F(PolicyTest, ParsesTlsScratchAndLimits) {
  MakeDir("bench");
  auto config = Parse(
      "tls: {ca: /etc/s/ca.crt, cert: /etc/s/a.crt, key: /etc/s/a.key}\n"
      "scratch: [$DIR/bench]\n"
      "limits: {max_size: 10G, max_runtime: 10m}\n"
      "targets:\n  t: {dir: $DIR/bench}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->tls.ca, "/etc/s/ca.crt");
  EXPECT_EQ(config->tls.key, "/etc/s/a.key");
  ASSERT_EQ(config->scratch.size(), 1u);
  EXPECT_EQ(config->limits.max_size_bytes, uint64_t{10} << 30);
  EXPECT_EQ(config->limits.max_runtime_nanos, int64_t{600} * 1'000'000'000);
}

TEST_F(PolicyTest, BadPolicyValuesNameTheirLine) {
  auto config = Parse("targets:\n  t: {dir: $DIR}\nlimits:\n  max_size: lots\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), StartsWith("agent.yaml:4: "));
  EXPECT_THAT(config.status().message(), HasSubstr("max_size"));
  config = Parse("targets:\n  t: {dir: $DIR}\ntls: {ca: /a, cert: /b}\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("all three of ca, cert and key"));
  config = Parse("targets:\n  t: {dir: $DIR}\nlimits: {max_things: 3}\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("unknown field 'limits.max_things'"));
}

TEST_F(PolicyTest, DirTargetOutsideScratchIsRefusedAtStart) {
  MakeDir("bench");
  MakeDir("home");
  auto config = Parse("scratch: [$DIR/bench]\ntargets:\n  ok: {dir: $DIR/bench}\n"
                      "  home: {dir: $DIR/home}\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), StartsWith("agent.yaml:4: "));
  EXPECT_THAT(config.status().message(), HasSubstr("target 'home'"));
  EXPECT_THAT(config.status().message(), HasSubstr("outside the agent's scratch directories"));
}

TEST_F(PolicyTest, SymlinkThatLeavesScratchIsRefusedAtPrepare) {
  MakeDir("bench");
  MakeDir("bench/t");
  MakeDir("elsewhere");
  auto config = Parse("scratch: [$DIR/bench]\ntargets:\n  scratch: {dir: $DIR/bench/t}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  stormark::v1::PhaseSpec spec = Spec();
  spec.mutable_stream()->set_size_bytes(kMiB);
  EXPECT_TRUE(CheckPolicy(spec, *config, host_).ok());
  // Someone swaps the target directory for a link out of the scratch area.
  const std::string target = common::StrCat(dir(), "/bench/t");
  ASSERT_EQ(rmdir(target.c_str()), 0);
  ASSERT_EQ(symlink(common::StrCat(dir(), "/elsewhere").c_str(), target.c_str()), 0);
  common::Status status = CheckPolicy(spec, *config, host_);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr("which resolves to " + dir() + "/elsewhere"));
}

TEST_F(PolicyTest, StreamOverMaxSizeIsPermissionDenied) {
  stormark::v1::PhaseSpec spec = Spec();
  spec.mutable_stream()->set_size_bytes(64 * kMiB);
  EXPECT_TRUE(CheckPolicy(spec, Capped(64 * kMiB, 0), host_).ok());
  common::Status status = CheckPolicy(spec, Capped(32 * kMiB, 0), host_);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr("stream would lay out up to 64 MiB"));
  EXPECT_THAT(status.message(), HasSubstr("limits.max_size (32 MiB)"));
}

TEST_F(PolicyTest, FileCountsTimesSizesCountTowardsMaxSize) {
  stormark::v1::PhaseSpec spec = Spec();
  auto* postmark = spec.mutable_postmark();
  postmark->set_number(1000);
  postmark->set_transactions(1000);
  postmark->set_min_size_bytes(1);
  postmark->set_max_size_bytes(1 << 20);  // up to 2000 files of 1 MiB
  EXPECT_EQ(*PhaseDataBytes(spec, Capped(0, 0).targets[0], host_), 2000 * kMiB);
  EXPECT_EQ(CheckPolicy(spec, Capped(1000 * kMiB, 0), host_).code(),
            absl::StatusCode::kPermissionDenied);

  AgentConfig few_files = Capped(0, 0);
  few_files.limits.max_files = 1999;
  common::Status status = CheckPolicy(spec, few_files, host_);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr("up to 2000 files, over this agent's limits.max_files"));

  stormark::v1::PhaseSpec bonnie = Spec();
  bonnie.mutable_bonnie()->set_skip_io(true);
  bonnie.mutable_bonnie()->set_files_k(16);
  bonnie.mutable_bonnie()->set_file_max_bytes(65536);
  EXPECT_EQ(*PhaseDataBytes(bonnie, Capped(0, 0).targets[0], host_), 16 * 1024 * 65536ull);
  EXPECT_EQ(CheckPolicy(bonnie, Capped(512 * kMiB, 0), host_).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(PolicyTest, OverflowingSizesSaturateAndAreRefused) {
  stormark::v1::PhaseSpec spec = Spec();
  auto* randio = spec.mutable_randio();
  randio->set_size_bytes(UINT64_MAX);
  randio->set_offset_bytes(UINT64_MAX);
  randio->set_numjobs(200);
  randio->set_offset_increment_bytes(UINT64_MAX);
  EXPECT_EQ(*PhaseDataBytes(spec, Capped(0, 0).targets[0], host_), UINT64_MAX);
  EXPECT_EQ(CheckPolicy(spec, Capped(kMiB, 0), host_).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(PolicyTest, RequestedRuntimeOverMaxRuntimeIsPermissionDenied) {
  constexpr int64_t kSecond = 1'000'000'000;
  stormark::v1::PhaseSpec spec = Spec();
  spec.mutable_randio()->set_runtime_nanos(50 * kSecond);
  spec.mutable_randio()->set_ramp_time_nanos(20 * kSecond);
  spec.mutable_randio()->set_size_bytes(kMiB);
  EXPECT_TRUE(CheckPolicy(spec, Capped(0, 70 * kSecond), host_).ok());
  common::Status status = CheckPolicy(spec, Capped(0, 60 * kSecond), host_);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr("limits.max_runtime"));

  stormark::v1::PhaseSpec command = Spec();
  command.mutable_command()->set_shell("true");
  command.mutable_command()->set_timeout_ms(120'000);
  EXPECT_EQ(CheckPolicy(command, Capped(0, 60 * kSecond), host_).code(),
            absl::StatusCode::kPermissionDenied);
  command.mutable_command()->set_timeout_ms(0);  // The watchdog stops it instead.
  EXPECT_TRUE(CheckPolicy(command, Capped(0, 60 * kSecond), host_).ok());
}

TEST_F(PolicyTest, ParsesMaxMemory) {
  auto config = Parse("targets:\n  t: {dir: $DIR}\nlimits: {max_memory: 3G}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->limits.max_memory_bytes, uint64_t{3} << 30);
  config = Parse("targets:\n  t: {dir: $DIR}\nlimits:\n  max_memory: 0\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              StartsWith("agent.yaml:4: limits.max_memory must be above 0"));
  config = Parse("targets:\n  t: {dir: $DIR}\nlimits:\n  max_memory: plenty\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("max_memory"));
}

TEST_F(PolicyTest, MemoryBudgetIsTheConfigsOrAQuarterOfTheRam) {
  ResourceLimits limits;
  HostFacts host;
  EXPECT_EQ(PhaseMemoryBudget(limits, host).bytes, 0u);  // RAM unknown: no cap.
  host.ram_bytes = 16 * 1024 * kMiB;
  EXPECT_EQ(PhaseMemoryBudget(limits, host).bytes, 4 * 1024 * kMiB);
  EXPECT_EQ(PhaseMemoryBudget(limits, host).note, "a quarter of its RAM");
  // A memory cgroup (systemd's MemoryMax, a container's limit) that allows less.
  host.memory_limit_bytes = 8 * 1024 * kMiB;
  EXPECT_EQ(PhaseMemoryBudget(limits, host).bytes, 4 * 1024 * kMiB);
  host.memory_limit_bytes = 1024 * kMiB;
  EXPECT_EQ(PhaseMemoryBudget(limits, host).bytes, 512 * kMiB);
  EXPECT_EQ(PhaseMemoryBudget(limits, host).note, "half of the 1 GiB its memory cgroup allows");
  limits.max_memory_bytes = 100 * kMiB;
  EXPECT_EQ(PhaseMemoryBudget(limits, host).bytes, 100 * kMiB);
  EXPECT_EQ(PhaseMemoryBudget(limits, host).note, "");
}

TEST_F(PolicyTest, RandioOverTheMemoryBudgetIsRefusedNamingItsParameters) {
  stormark::v1::PhaseSpec spec = Spec();
  auto* randio = spec.mutable_randio();
  randio->set_rw(stormark::v1::RandioSpec::RANDREAD);
  randio->set_iodepth(4096);
  randio->set_bs_min(1 << 20);
  randio->set_size_bytes(64 * kMiB);
  HostFacts host;
  host.ram_bytes = uint64_t{24} << 30;
  AgentConfig config = Capped(0, 0);
  const common::Status status = CheckPolicy(spec, config, host);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(status.message(),
            "randio needs 8.00 GiB of memory (buffers: iodepth 4096 x bs 1 MiB x 1 job, 2 MiB "
            "each), over this agent's limits.max_memory of 6 GiB (a quarter of its RAM); lower "
            "iodepth, bs or numjobs, or raise limits.max_memory");
  // A configured limit is named as such, and one above the estimate lets the phase through.
  config.limits.max_memory_bytes = 1024 * kMiB;
  EXPECT_THAT(CheckPolicy(spec, config, host).message(),
              HasSubstr("over this agent's limits.max_memory of 1 GiB; lower"));
  config.limits.max_memory_bytes = 9 * 1024 * kMiB;
  EXPECT_TRUE(CheckPolicy(spec, config, host).ok());
  randio->set_iodepth(16);
  EXPECT_TRUE(CheckPolicy(spec, Capped(0, 0), host).ok());

  // Many jobs of large blocks.
  randio->set_iodepth(1);
  randio->set_bs_min(64 << 20);
  randio->set_numjobs(256);
  randio->set_offset_increment_bytes(64 * kMiB);
  EXPECT_THAT(CheckPolicy(spec, Capped(0, 0), host).message(),
              HasSubstr("(buffers: iodepth 1 x bs 64 MiB x 256 jobs)"));
}

TEST_F(PolicyTest, PostmarkAndBonnieTablesCountTowardsTheMemoryBudget) {
  HostFacts host;
  host.ram_bytes = uint64_t{2} << 30;  // A budget of 512 MiB.
  stormark::v1::PhaseSpec postmark = Spec();
  postmark.mutable_postmark()->set_number(10'000'000);
  const common::Status status = CheckPolicy(postmark, Capped(0, 0), host);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(status.message(), HasSubstr("postmark needs "));
  EXPECT_THAT(status.message(), HasSubstr("lower number, or raise limits.max_memory"));
  postmark.mutable_postmark()->set_number(100'000);
  EXPECT_TRUE(CheckPolicy(postmark, Capped(0, 0), host).ok());

  stormark::v1::PhaseSpec bonnie = Spec();
  bonnie.mutable_bonnie()->set_size_bytes(64 * kMiB);
  bonnie.mutable_bonnie()->set_chunk_size(64 << 20);
  bonnie.mutable_bonnie()->set_seekers(64);
  EXPECT_THAT(CheckPolicy(bonnie, Capped(0, 0), host).message(),
              HasSubstr("(chunk buffers: (1 + seekers 64) x chunk 64 MiB)"));
}

TEST_F(PolicyTest, SpecErrorsComeBeforeTheMemoryFigure) {
  HostFacts host;
  host.ram_bytes = uint64_t{1} << 30;
  stormark::v1::PhaseSpec spec = Spec();
  spec.mutable_stream()->set_direction(stormark::v1::StreamSpec::WRITE);
  spec.mutable_stream()->set_block_size(1u << 30);  // Over the 64 MiB limit of bs.
  spec.mutable_stream()->set_size_bytes(1u << 30);
  // The factory refuses it with the spec's own message.
  EXPECT_TRUE(CheckPolicy(spec, Capped(0, 0), host).ok());
}

TEST_F(PolicyTest, RandioVerifyOnADeviceOfUnknownSizeCountsTheLargestBook) {
  stormark::v1::PhaseSpec spec = Spec();
  spec.set_target("disk");
  auto* randio = spec.mutable_randio();
  randio->set_rw(stormark::v1::RandioSpec::RANDREAD);
  randio->set_bs_min(4096);
  randio->set_verify(true);
  TargetConfig disk;
  disk.name = "disk";
  disk.kind = "block";
  EXPECT_EQ(PhaseMemory(spec, disk).dominant()->name, "the verify book");
  EXPECT_EQ(PhaseMemory(spec, disk).dominant()->bytes, uint64_t{256} << 20);
  disk.size = uint64_t{1} << 30;  // A configured size bounds it.
  EXPECT_EQ(PhaseMemory(spec, disk).dominant()->name, "the lay-out and read-back chunk");
  // A dir target's file has its default size.
  EXPECT_LT(PhaseMemory(spec, Capped(0, 0).targets[0]).total(), 4 * kMiB);
}

}  // namespace
}  // namespace stormark::agent
