#include "controller/workloads/postmark/postmark_config.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "common/spec_check.h"
#include "common/workloads/postmark/postmark_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::controller {
namespace {

using stormark::v1::PostmarkSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const PostmarkSpec kDefaults = common::WithPostmarkDefaults(PostmarkSpec());

common::StatusOr<PostmarkConfig> Parse(const std::string& text) {
  return ParsePostmarkConfig(text, "pm.cfg", "", kDefaults);
}

std::string ParseError(const std::string& text) {
  auto config = Parse(text);
  EXPECT_FALSE(config.ok()) << "parsed:\n" << text;
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(config.status().message());
}

TEST(ParsePostmarkConfig, ReadsTheReferenceScript) {
  auto config = Parse(
      "set size 1000 9000\n"
      "set number 2000\n"
      "set transactions 50000\n"
      "run\n"
      "quit\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->runs.size(), 1u);
  const PostmarkSpec& run = config->runs[0];
  EXPECT_EQ(run.min_size_bytes(), 1000u);
  EXPECT_EQ(run.max_size_bytes(), 9000u);
  EXPECT_EQ(run.number(), 2000u);
  EXPECT_EQ(run.transactions(), 50000u);
  EXPECT_EQ(run.seed(), 42u);  // Untouched: the start's.
  EXPECT_THAT(config->notes, IsEmpty());
}

TEST(ParsePostmarkConfig, ReadsEverySettingWithPostmarksSpelling) {
  auto config = Parse(
      "# every setting PostMark has, but location\r\n"
      "\n"
      "  set size   700\r\n"
      "set\tnumber 10\n"
      "set subdirectories 3\n"
      "set read 1024\n"
      "set write 4096\n"
      "set buffering false\n"
      "set bias read -1\n"
      "set bias create 10\n"
      "set seed 99\n"
      "set report terse\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->runs.size(), 1u);  // No `run`: the settings at the end, once.
  const PostmarkSpec& run = config->runs[0];
  EXPECT_EQ(run.min_size_bytes(), 700u);
  EXPECT_EQ(run.max_size_bytes(), 700u);
  EXPECT_EQ(run.number(), 10u);
  EXPECT_EQ(run.subdirectories(), 3u);
  EXPECT_EQ(run.read_block_size(), 1024u);
  EXPECT_EQ(run.write_block_size(), 4096u);
  EXPECT_TRUE(run.unbuffered());
  EXPECT_EQ(run.bias_read(), -1);
  EXPECT_EQ(run.bias_create(), 10);
  EXPECT_EQ(run.seed(), 99u);
  EXPECT_EQ(run.report(), PostmarkSpec::TERSE);
}

TEST(ParsePostmarkConfig, EachRunTakesTheSettingsOfItsMoment) {
  auto config = Parse(
      "set number 100\n"
      "run\n"
      "set size 1000 90000\n"
      "run results.txt\n"
      "set number 5\n"
      "show\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->runs.size(), 2u);
  EXPECT_EQ(config->runs[0].number(), 100u);
  EXPECT_EQ(config->runs[0].max_size_bytes(), 10000u);
  EXPECT_EQ(config->runs[1].number(), 100u);
  EXPECT_EQ(config->runs[1].max_size_bytes(), 90000u);
  EXPECT_THAT(config->notes,
              ElementsAre(HasSubstr("pm.cfg:4: 'run results.txt' runs; its report file "
                                    "'results.txt' is ignored"),
                          "pm.cfg:6: 'show' ignored: each phase's title shows its settings",
                          HasSubstr("pm.cfg:5: this and later settings come after the last "
                                    "'run' and are not used")));
}

TEST(ParsePostmarkConfig, QuitEndsTheScript) {
  auto config = Parse("set number 7\nquit\nthis is not a command\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->runs[0].number(), 7u);
  config = Parse("set number 8\nexit\nset number 9\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->runs[0].number(), 8u);
}

TEST(ParsePostmarkConfig, BadLinesNameTheFileLineAndWord) {
  EXPECT_EQ(ParseError("set number 10\nset nubmer 2000\n"),
            "pm.cfg:2: 'set nubmer 2000': unknown setting 'nubmer' (size, number, seed, "
            "transactions, location, subdirectories, read, write, buffering, bias read, "
            "bias create, report)");
  EXPECT_THAT(ParseError("\n\nrnu\n"), HasSubstr("pm.cfg:3: 'rnu': unknown command 'rnu'"));
  EXPECT_THAT(ParseError("set number 0\n"),
              HasSubstr("pm.cfg:1: 'set number 0': bad number '0': expected a whole number"));
  EXPECT_THAT(ParseError("set size 10k 20k\n"),
              HasSubstr("bad size '10k': PostMark takes plain whole numbers (it reads '10k' as "
                        "10)"));
  EXPECT_THAT(ParseError("set size 9000 1000\n"), HasSubstr("the high end is below the low end"));
  EXPECT_THAT(ParseError("set size 1 2 3\n"), HasSubstr("'size' takes one or two values"));
  EXPECT_THAT(ParseError("set number\n"), HasSubstr("'number' takes one value"));
  EXPECT_THAT(ParseError("set\n"), HasSubstr("'set' needs a setting"));
  EXPECT_THAT(ParseError("set bias write 5\n"), HasSubstr("unknown setting 'bias write'"));
  EXPECT_THAT(ParseError("set bias read 11\n"), HasSubstr("from -1 to 10"));
  EXPECT_THAT(ParseError("set buffering yes\n"), HasSubstr("PostMark takes true or false"));
  EXPECT_THAT(ParseError("set report loud\n"), HasSubstr("use verbose or terse"));
  EXPECT_THAT(ParseError("!rm -rf /\n"), HasSubstr("pm.cfg:1: '!rm -rf /': shell escapes"));
}

TEST(ParsePostmarkConfig, LocationIsIgnoredWithANoteNamingWhereThePhaseRuns) {
  // As in almost every real script: it runs unchanged, in the agent's target.
  auto config = Parse("set location /mnt/aoe\nset location /mnt/other 2\nset number 100\nrun\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->runs.size(), 1u);
  EXPECT_EQ(config->runs[0].number(), 100u);
  EXPECT_THAT(config->notes,
              ElementsAre(HasSubstr("pm.cfg:1: 'set location /mnt/aoe' ignored: the phase runs "
                                    "in the agent's target (plan `target:` or --target"),
                          HasSubstr("pm.cfg:2: 'set location /mnt/other 2' ignored")));
  EXPECT_THAT(ParseError("set location\n"), HasSubstr("'location' takes a directory"));
}

class PostmarkConfigFilesTest : public agent::TempDirTest {
 protected:
  void SetUp() override {
    agent::TempDirTest::SetUp();
    dir_ = dir();
    std::filesystem::create_directory(dir_ + "/sub");
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(PostmarkConfigFilesTest, LoadReadsAScriptRelativeToTheLoadingOne) {
  Write("sub/common.cfg", "set number 300\nquit\nset number 1\n");
  const std::string main = Write("main.cfg", "load sub/common.cfg\nset transactions 7\nrun\n");
  auto config = LoadPostmarkConfig(main, kDefaults);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->runs.size(), 1u);
  EXPECT_EQ(config->runs[0].number(), 300u);  // `quit` ended the loaded script only.
  EXPECT_EQ(config->runs[0].transactions(), 7u);
}

TEST_F(PostmarkConfigFilesTest, AnErrorInALoadedScriptNamesThatScript) {
  Write("sub/bad.cfg", "set number 3\nset numbr 4\n");
  const std::string main = Write("main.cfg", "load sub/bad.cfg\n");
  auto config = LoadPostmarkConfig(main, kDefaults);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              HasSubstr(dir_ + "/sub/bad.cfg:2: 'set numbr 4': unknown setting 'numbr'"));
}

TEST_F(PostmarkConfigFilesTest, MissingAndLoopingScriptsAreErrors) {
  auto missing = LoadPostmarkConfig(dir_ + "/none.cfg", kDefaults);
  EXPECT_THAT(missing.status().message(), HasSubstr("cannot read PostMark script"));
  const std::string loads_missing = Write("a.cfg", "load none.cfg\n");
  EXPECT_THAT(LoadPostmarkConfig(loads_missing, kDefaults).status().message(),
              HasSubstr("a.cfg:1: 'load none.cfg': cannot read PostMark script"));
  const std::string loop = Write("loop.cfg", "load loop.cfg\n");
  EXPECT_THAT(LoadPostmarkConfig(loop, kDefaults).status().message(),
              HasSubstr("load each other more than 8 deep"));
}

}  // namespace
}  // namespace stormark::controller
