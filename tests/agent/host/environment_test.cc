#include "agent/host/environment.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

class EnvironmentTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    paths_ = SystemPaths::UnderRoot(dir());
    std::filesystem::create_directories(paths_.sys_cpu);
    std::filesystem::create_directories(paths_.proc_sys_vm);
  }
  static void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text << "\n";
  }
  SystemPaths paths_;
};

TEST_F(EnvironmentTest, HostFactsGovernorAndDirtySettings) {
  Write(paths_.proc_sys_vm + "/dirty_ratio", "20");
  Write(paths_.proc_sys_vm + "/dirty_background_ratio", "10");
  Write(paths_.proc_sys_vm + "/dirty_bytes", "0");
  Write(paths_.proc_sys_vm + "/dirty_background_bytes", "0");
  Write(paths_.proc_sys_vm + "/dirty_expire_centisecs", "3000");
  Write(paths_.proc_sys_vm + "/dirty_writeback_centisecs", "500");
  Write(paths_.sys_cpu + "/cpu0/cpufreq/scaling_governor", "performance");
  Write(paths_.sys_cpu + "/cpu1/cpufreq/scaling_governor", "performance");
  HostFacts host{.hostname = "db1",
                 .kernel = "Linux 6.1.0",
                 .cpu_model = "Xeon",
                 .cpu_count = 2,
                 .ram_bytes = 1 << 30};
  const Environment env = ReadHostEnvironment(host, paths_);
  EXPECT_EQ(env.at("kernel"), "Linux 6.1.0");
  EXPECT_EQ(env.at("cpu_model"), "Xeon");
  EXPECT_EQ(env.at("cpu_count"), "2");
  EXPECT_EQ(env.at("ram_bytes"), "1073741824");
  EXPECT_EQ(env.at("cpu_governor"), "performance");
  EXPECT_EQ(env.at("vm.dirty_ratio"), "20");
  EXPECT_EQ(env.at("vm.dirty_background_ratio"), "10");
  EXPECT_EQ(env.at("vm.dirty_bytes"), "0");
  EXPECT_EQ(env.at("vm.dirty_background_bytes"), "0");
  EXPECT_EQ(env.at("vm.dirty_expire_centisecs"), "3000");
  EXPECT_EQ(env.at("vm.dirty_writeback_centisecs"), "500");
  EXPECT_FALSE(env.contains("hostname"));  // Differs between any two hosts: not a setting.
}

TEST_F(EnvironmentTest, GovernorIsNoneWithoutCpufreqAndListsMixedOnes) {
  std::filesystem::create_directories(paths_.sys_cpu + "/cpu0");
  std::filesystem::create_directories(paths_.sys_cpu + "/cpufreq");
  EXPECT_EQ(ReadHostEnvironment({}, paths_).at("cpu_governor"), "none");
  Write(paths_.sys_cpu + "/cpu0/cpufreq/scaling_governor", "powersave");
  Write(paths_.sys_cpu + "/cpu10/cpufreq/scaling_governor", "performance");
  Write(paths_.sys_cpu + "/cpu2/cpufreq/scaling_governor", "powersave");
  EXPECT_EQ(ReadHostEnvironment({}, paths_).at("cpu_governor"), "powersave,performance");
}

TEST_F(EnvironmentTest, MissingProcFilesAreLeftOut) {
  const Environment env = ReadHostEnvironment({}, paths_);
  EXPECT_FALSE(env.contains("vm.dirty_ratio"));
  EXPECT_FALSE(env.contains("kernel"));
}

TEST(TargetEnvironment, TakesTheSettingsThatChangeTheFigures) {
  stormark::v1::TargetInfo info;
  info.set_filesystem("xfs");
  info.set_mount_options("rw,noatime");
  info.set_transport("local");
  info.set_transport_detail("sata");
  info.set_free_bytes(12345);  // Changes with every run: not an environment fact.
  auto& queue = *info.mutable_device_queue();
  queue["name"] = "sda";
  queue["scheduler"] = "mq-deadline";
  queue["read_ahead_kb"] = "128";
  queue["logical_block_size"] = "512";
  const Environment env = TargetEnvironment(info);
  EXPECT_EQ(env, (Environment{{"device", "sda"},
                              {"filesystem", "xfs"},
                              {"mount_options", "rw,noatime"},
                              {"read_ahead_kb", "128"},
                              {"scheduler", "mq-deadline"},
                              {"transport", "local"},
                              {"transport_detail", "sata"}}));
}

TEST(EnvironmentOnThisMachine, ReadsTheRealDirtySettings) {
  const Environment env = ReadHostEnvironment({}, SystemPaths());
  ASSERT_TRUE(env.contains("vm.dirty_ratio"));
  EXPECT_FALSE(env.at("cpu_governor").empty());
}

}  // namespace
}  // namespace stormark::agent
