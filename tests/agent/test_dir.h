// A scratch directory for agent tests, on a real disk (/var/tmp, since /tmp may be tmpfs).
#ifndef STORMARK_TESTS_AGENT_TEST_DIR_H_
#define STORMARK_TESTS_AGENT_TEST_DIR_H_

#include <string>
#include <vector>

#include "agent/config/config.h"
#include "gtest/gtest.h"

namespace stormark::agent {

// Creates a fresh directory in SetUp and removes it, with anything left inside, in TearDown,
// whether or not the test passed.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  const std::string& dir() const { return dir_; }
  // A configuration with one target, `name`, on dir().
  AgentConfig ConfigWithTarget(const std::string& name = "scratch") const;
  // Names of the entries directly inside `path`, sorted; "." and ".." left out.
  static std::vector<std::string> ListDir(const std::string& path);
  // Recursively counts the files and directories under `path`, not counting `path`.
  static int CountEntries(const std::string& path);

 private:
  std::string dir_;
};

}  // namespace stormark::agent

#endif  // STORMARK_TESTS_AGENT_TEST_DIR_H_
