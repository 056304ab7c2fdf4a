#include "controller/certs/certs_command.h"

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

class CertsCommandTest : public agent::TempDirTest {
 protected:
  // What `run` printed on its `out`, and its exit code.
  template <typename Fn>
  std::string Printed(Fn run, int* code) {
    char* text = nullptr;
    size_t size = 0;
    std::FILE* out = open_memstream(&text, &size);
    std::FILE* err = std::tmpfile();
    *code = run(out, err);
    std::fclose(out);
    std::fclose(err);
    std::string printed(text, size);
    std::free(text);
    return printed;
  }
};

// Every path the output says was written exists; a path it names on another host is only
// ever the target of a copy ("-> /etc/stormark/..."), never given as a file it made.
TEST_F(CertsCommandTest, IssuePrintsOnlyPathsItWroteAndSaysTheRestAreCopiesToMake) {
  CertsOptions options;
  options.dir = dir() + "/pki";
  int code = -1;
  Printed([&](std::FILE* out, std::FILE* err) { return CertsInit(options, out, err); }, &code);
  ASSERT_EQ(code, 0);
  options.agent = "db1";
  const std::string text =
      Printed([&](std::FILE* out, std::FILE* err) { return CertsIssue(options, out, err); }, &code);
  ASSERT_EQ(code, 0) << text;

  const std::regex written(R"((?:^|\n)(?:Agent certificate for db1|key): (\S+))");
  int found = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), written);
       it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(std::filesystem::exists((*it)[1].str())) << (*it)[1].str() << "\n" << text;
    ++found;
  }
  EXPECT_EQ(found, 2) << text;
  const std::regex copy(R"(\n  (\S+) -> (/etc/stormark/\S+))");
  int copies = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), copy); it != std::sregex_iterator();
       ++it) {
    EXPECT_TRUE(std::filesystem::exists((*it)[1].str())) << (*it)[1].str();
    ++copies;
  }
  EXPECT_EQ(copies, 3) << text;
  EXPECT_THAT(text, HasSubstr("On db1, copy them where its agent.yaml will name them"));
}

}  // namespace
}  // namespace stormark::controller
