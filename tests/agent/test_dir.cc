#include "tests/agent/test_dir.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace stormark::agent {

void TempDirTest::SetUp() {
  std::string pattern = "/var/tmp/stormark-test-XXXXXX";
  ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "mkdtemp failed";
  dir_ = pattern;
}

void TempDirTest::TearDown() {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  EXPECT_FALSE(ec) << "cannot remove " << dir_ << ": " << ec.message();
}

AgentConfig TempDirTest::ConfigWithTarget(const std::string& name) const {
  AgentConfig config;
  config.targets.push_back(TargetConfig{name, "dir", dir_});
  return config;
}

std::vector<std::string> TempDirTest::ListDir(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

int TempDirTest::CountEntries(const std::string& path) {
  int n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace stormark::agent
