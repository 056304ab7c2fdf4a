#include "agent/config/policy.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/host/sysinfo.h"
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
  auto config = Parse(
      "scratch: [$DIR/bench]\ntargets:\n  ok: {dir: $DIR/bench}\n"
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
  EXPECT_EQ(CheckPolicy(spec, Capped(kMiB, 0), host_).code(), absl::StatusCode::kPermissionDenied);
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

TEST_F(PolicyTest, GroupWritableDirTargetIsRefusedAtPrepareUnlessStrictModesIsOff) {
  MakeDir("t");
  AgentConfig config;
  config.targets.push_back(TargetConfig{"scratch", "dir", dir() + "/t"});
  stormark::v1::PhaseSpec spec = Spec();
  spec.mutable_stream()->set_size_bytes(kMiB);
  EXPECT_TRUE(CheckPolicy(spec, config, host_).ok());
  // Checked at each phase: the mode may change while the agent runs.
  ASSERT_EQ(chmod((dir() + "/t").c_str(), 0775), 0);
  common::Status status = CheckPolicy(spec, config, host_);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(common::StrCat("target 'scratch': ", dir(), "/t is owned by ")));
  EXPECT_THAT(std::string(status.message()), HasSubstr("mode 0775"));
  config.targets[0].strict_modes = false;
  EXPECT_TRUE(CheckPolicy(spec, config, host_).ok());
}

TEST_F(PolicyTest, DirTargetOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown to another user";
  MakeDir("t");
  ASSERT_EQ(chown((dir() + "/t").c_str(), 65534, 65534), 0);
  AgentConfig config;
  config.targets.push_back(TargetConfig{"scratch", "dir", dir() + "/t"});
  config.agent_uid = 0;
  EXPECT_THAT(std::string(CheckTargetOwnership(config, config.targets[0]).message()),
              HasSubstr("it must be owned by root or by the agent's user (root)"));
  // An agent running as that user trusts it.
  config.agent_uid = 65534;
  EXPECT_TRUE(CheckTargetOwnership(config, config.targets[0]).ok());
}

TEST_F(PolicyTest, BlockFileTargetIsCheckedAndADeviceIsNot) {
  MakeDir("img");
  const std::string file = dir() + "/img/disk.img";
  AgentConfig config;
  config.targets.push_back(TargetConfig{"img", "block", file, kMiB, true});
  // Not made yet: the directory it will be made in is what counts.
  EXPECT_TRUE(CheckTargetOwnership(config, config.targets[0]).ok());
  ASSERT_EQ(chmod((dir() + "/img").c_str(), 0777), 0);
  EXPECT_THAT(std::string(CheckTargetOwnership(config, config.targets[0]).message()),
              StartsWith(common::StrCat("target 'img': ", dir(), "/img is owned by ")));
  ASSERT_EQ(chmod((dir() + "/img").c_str(), 0700), 0);
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  ASSERT_EQ(chmod(file.c_str(), 0600), 0);
  EXPECT_TRUE(CheckTargetOwnership(config, config.targets[0]).ok());
  ASSERT_EQ(chmod(file.c_str(), 0666), 0);
  stormark::v1::PhaseSpec spec = Spec();
  spec.set_target("img");
  spec.mutable_randio()->set_size_bytes(kMiB);
  EXPECT_EQ(CheckPolicy(spec, config, host_).code(), absl::StatusCode::kPermissionDenied);
  config.targets[0].strict_modes = false;
  EXPECT_TRUE(CheckPolicy(spec, config, host_).ok());
  // A device node is root:disk 0660 by design, and is not judged by its mode. (A node made
  // here for the test, never opened.)
  if (geteuid() != 0) return;
  const std::string node = dir() + "/img/node";
  ASSERT_EQ(mknod(node.c_str(), S_IFBLK | 0600, makedev(7, 0)), 0);
  ASSERT_EQ(chmod(node.c_str(), 0666), 0);
  config.targets[0] = TargetConfig{"dev", "block", node};
  EXPECT_TRUE(CheckTargetOwnership(config, config.targets[0]).ok());
}

TEST_F(PolicyTest, CommandProgramInAWritableDirectoryIsRefused) {
  MakeDir("bin");
  const std::string program = dir() + "/bin/job";
  {
    std::FILE* f = std::fopen(program.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("#!/bin/sh\n", f);
    std::fclose(f);
  }
  ASSERT_EQ(chmod(program.c_str(), 0755), 0);
  AgentConfig config = ConfigWithTarget();
  config.commands.enabled = true;
  stormark::v1::PhaseSpec spec = Spec();
  spec.mutable_command()->add_argv(program);
  EXPECT_TRUE(CheckPolicy(spec, config, host_).ok());
  ASSERT_EQ(chmod(program.c_str(), 0775), 0);
  common::Status status = CheckPolicy(spec, config, host_);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(common::StrCat("program '", program, "': ", program, " is owned by ")));
  // A program the command policy refuses anyway is left for the workload to name.
  config.commands.enabled = false;
  EXPECT_TRUE(CheckPolicy(spec, config, host_).ok());
  // So is one that does not exist.
  config.commands.enabled = true;
  spec.mutable_command()->set_argv(0, dir() + "/bin/missing");
  EXPECT_TRUE(CheckPolicy(spec, config, host_).ok());
  // /bin/sh, for a shell command line, passes on any sane host, as does a bare name found in
  // PATH.
  spec.mutable_command()->clear_argv();
  spec.mutable_command()->set_shell("true");
  EXPECT_TRUE(CheckPolicy(spec, config, host_).ok());
  spec.mutable_command()->clear_shell();
  spec.mutable_command()->add_argv("true");
  EXPECT_TRUE(CheckPolicy(spec, config, host_).ok());
  // With an allow-list, the rule's program is what is checked.
  ASSERT_EQ(chmod(program.c_str(), 0775), 0);
  config.commands.allow = {CommandRule{{"job", "**"}, program, {"job"}}};
  spec.mutable_command()->set_argv(0, "job");
  EXPECT_THAT(std::string(CheckPolicy(spec, config, host_).message()),
              StartsWith(common::StrCat("program 'job': ", program, " is owned by ")));
}

class TrustedFilesTest : public PolicyTest {
 protected:
  std::string WriteFile(const std::string& name, mode_t mode) {
    const std::string path = dir() + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "w");
    EXPECT_NE(f, nullptr) << path;
    if (f != nullptr) std::fclose(f);
    EXPECT_EQ(chmod(path.c_str(), mode), 0) << path;
    return path;
  }
};

TEST_F(TrustedFilesTest, PassesOwnFilesAndWarnsOfDirTargets) {
  const std::string config_path = WriteFile("agent.yaml", 0600);
  AgentConfig config = ConfigWithTarget();
  config.tls = {WriteFile("ca.crt", 0644), WriteFile("agent.crt", 0644),
                WriteFile("agent.key", 0600)};
  std::vector<std::string> warnings;
  EXPECT_TRUE(CheckTrustedFiles(config, config_path, &warnings).ok());
  EXPECT_TRUE(warnings.empty());

  MakeDir("shared");
  ASSERT_EQ(chmod((dir() + "/shared").c_str(), 0777), 0);
  config.targets.push_back(TargetConfig{"shared", "dir", dir() + "/shared"});
  config.targets.push_back(TargetConfig{"nfs", "dir", dir() + "/shared"});
  config.targets.back().strict_modes = false;
  EXPECT_TRUE(CheckTrustedFiles(config, config_path, &warnings).ok());
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_THAT(warnings[0], StartsWith("warning: target 'shared': every phase on it is refused "
                                      "until this is fixed: " +
                                      dir() + "/shared is owned"));
  EXPECT_THAT(warnings[1], StartsWith("warning: target 'nfs': strict_modes is off"));
}

TEST_F(TrustedFilesTest, WritableConfigOrKeyRefusesToStart) {
  const std::string config_path = WriteFile("agent.yaml", 0664);
  AgentConfig config = ConfigWithTarget();
  std::vector<std::string> warnings;
  common::Status status = CheckTrustedFiles(config, config_path, &warnings);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("config: " + config_path + " is owned by "));
  ASSERT_EQ(chmod(config_path.c_str(), 0600), 0);

  config.tls = {WriteFile("ca.crt", 0644), WriteFile("agent.crt", 0644),
                WriteFile("agent.key", 0666)};
  status = CheckTrustedFiles(config, config_path, &warnings);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("tls.key: " + config.tls.key + " is owned by "));
  EXPECT_THAT(std::string(status.message()), HasSubstr("mode 0666"));
}

TEST_F(TrustedFilesTest, RelativeConfigPathIsWalkedFromTheWorkingDirectory) {
  WriteFile("agent.yaml", 0600);
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(dir().c_str()), 0);
  std::vector<std::string> warnings;
  const common::Status ok = CheckTrustedFiles(ConfigWithTarget(), "agent.yaml", &warnings);
  ASSERT_EQ(chmod("agent.yaml", 0620), 0);
  const common::Status refused = CheckTrustedFiles(ConfigWithTarget(), "agent.yaml", &warnings);
  ASSERT_EQ(chdir(cwd), 0);
  EXPECT_TRUE(ok.ok()) << ok;
  EXPECT_THAT(std::string(refused.message()),
              StartsWith("config: " + dir() + "/agent.yaml is owned by "));
}

TEST_F(TrustedFilesTest, ARefusalAboveTheFileNamesTheSettingsPathToo) {
  MakeDir("etc");
  const std::string config_path = WriteFile("etc/agent.yaml", 0600);
  ASSERT_EQ(chmod((dir() + "/etc").c_str(), 0777), 0);
  std::vector<std::string> warnings;
  common::Status status = CheckTrustedFiles(ConfigWithTarget(), config_path, &warnings);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(common::StrCat("config ", config_path, ": ", dir(), "/etc is owned by ")));
}

TEST_F(TrustedFilesTest, AllowedProgramsAndNetworkSecretsAreChecked) {
  const std::string config_path = WriteFile("agent.yaml", 0600);
  AgentConfig config = ConfigWithTarget();
  const std::string job = WriteFile("job", 0775);
  config.commands.allow = {CommandRule{{job, "**"}, job, {job}}};
  std::vector<std::string> warnings;
  EXPECT_THAT(std::string(CheckTrustedFiles(config, config_path, &warnings).message()),
              StartsWith("commands.allow: " + job + " is owned by "));
  config.commands.allow.clear();
  TargetConfig lun{"lun", "iscsi", "iscsi://127.0.0.1/iqn.2003-01.org.example:x/0"};
  lun.chap.password_file = WriteFile("chap.secret", 0644);
  ASSERT_EQ(chmod(lun.chap.password_file.c_str(), 0646), 0);
  config.targets.push_back(lun);
  EXPECT_THAT(std::string(CheckTrustedFiles(config, config_path, &warnings).message()),
              StartsWith("target 'lun': chap.password_file: "));
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
