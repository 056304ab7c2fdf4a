// The reader's include directive, on files in a scratch directory.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "controller/fio/job_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller::fio {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fresh directory, removed with its contents when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    char name[] = "/tmp/job_file_test.XXXXXX";
    if (mkdtemp(name) != nullptr) path_ = name;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }

  const std::string& path() const { return path_; }

  // Writes `text` to `name` (which may hold directories) and returns its path.
  std::string Write(const std::string& name, std::string_view text) const {
    const std::filesystem::path file = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }

 private:
  std::string path_;
};

// Where each option came from: "name=value @ file:line".
std::vector<std::string> Sources(const FioJob& job, const std::string& dir) {
  std::vector<std::string> out;
  for (const JobOption& option : job.options) {
    std::string file = option.file;
    if (file.starts_with(dir + "/")) file = file.substr(dir.size() + 1);
    out.push_back(option.name + "=" + option.value + " @ " + file + ":" +
                  std::to_string(option.line));
  }
  return out;
}

std::string ReadError(const std::string& path) {
  auto jobs = ReadJobFile(path, JobFileFacts{});
  EXPECT_FALSE(jobs.ok()) << "read " << (jobs.ok() ? jobs->size() : 0) << " jobs";
  return std::string(jobs.status().message());
}

TEST(JobFileInclude, IncludedLinesJoinTheirSectionRelativeToTheIncludingFile) {
  ScratchDir dir;
  dir.Write("inc/common.fio", "bs=8k\ninclude more.fio\n");
  dir.Write("inc/more.fio", "; nested, found next to common.fio\niodepth=3\n");
  dir.Write("inc/job.fio", "size=1m\n");
  const std::string top =
      dir.Write("top.fio", "[global]\ninclude inc/common.fio\n[a]\nrw=read\ninclude inc/job.fio\n");
  auto jobs = ReadJobFile(top, JobFileFacts{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].file, top);
  EXPECT_THAT(Sources((*jobs)[0], dir.path()),
              ElementsAre("bs=8k @ inc/common.fio:1", "iodepth=3 @ inc/more.fio:2",
                          "rw=read @ top.fio:4", "size=1m @ inc/job.fio:1"));
}

TEST(JobFileInclude, AnAbsolutePathIsUsedAsIs) {
  ScratchDir dir;
  const std::string inc = dir.Write("abs.inc", "bs=4k\n");
  auto jobs = ParseJobText("[a]\ninclude " + inc + "\n", "job.fio", JobFileFacts{});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ((*jobs)[0].options[0].file, inc);
}

TEST(JobFileInclude, AFileIncludingItselfIsALoop) {
  ScratchDir dir;
  const std::string text = "[a]\nbs=4k\ninclude job.fio\n";
  const std::string path = dir.Write("job.fio", text);
  auto jobs = ParseJobText(text, "job.fio", JobFileFacts{}, {}, dir.path());
  EXPECT_EQ(jobs.status().message(), "job.fio:3: include loop: job.fio includes itself");
  EXPECT_EQ(ReadError(path), path + ":3: include loop: " + path + " includes itself");
}

TEST(JobFileInclude, ALongerLoopListsTheFilesInIt) {
  ScratchDir dir;
  const std::string b = dir.Write("b.inc", "bs=4k\ninclude c.inc\n");
  const std::string c = dir.Write("c.inc", "include b.inc\n");
  const std::string top = dir.Write("a.fio", "[j]\ninclude b.inc\n");
  EXPECT_EQ(ReadError(top), c + ":1: include loop: " + b + " -> " + c + " -> " + b);
}

TEST(JobFileInclude, IncludesNestNoDeeperThanSixteenFiles) {
  ScratchDir dir;
  for (int i = 0; i < 20; ++i) {
    dir.Write(std::string("d") + std::to_string(i) + ".inc",
              std::string("include d") + std::to_string(i + 1) + ".inc\n");
  }
  const std::string top = dir.Write("deep.fio", "[j]\ninclude d0.inc\n");
  EXPECT_EQ(ReadError(top), dir.path() + "/d14.inc:1: include " + dir.path() +
                                "/d15.inc: includes nest deeper than 16 files");
}

TEST(JobFileInclude, AMissingFileIsNotFoundAtTheIncludeLine) {
  ScratchDir dir;
  const std::string top = dir.Write("top.fio", "[j]\ninclude missing.fio\n");
  auto jobs = ReadJobFile(top, JobFileFacts{});
  EXPECT_EQ(jobs.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(jobs.status().message(), top + ":2: cannot read included fio job file " + dir.path() +
                                         "/missing.fio: No such file or directory");
}

TEST(JobFileInclude, AnIncludedFileMayNotHoldASection) {
  ScratchDir dir;
  const std::string inc = dir.Write("sec.inc", "bs=4k\n[other]\n");
  const std::string top = dir.Write("top.fio", "[j]\ninclude sec.inc\n");
  EXPECT_EQ(ReadError(top), inc +
                                ":2: an included file may not hold a [section] (fio: \"No new "
                                "sections in included files\")");
}

TEST(JobFileInclude, TheDirectiveMustBeWellFormedAndInASection) {
  EXPECT_THAT(ParseJobText("include x.fio\n[a]\n", "job.fio", JobFileFacts{}).status().message(),
              HasSubstr("job.fio:1: 'include x.fio' comes before any [section]"));
  EXPECT_EQ(ParseJobText("[a]\ninclude\n", "job.fio", JobFileFacts{}).status().message(),
            "job.fio:2: 'include': expected 'include FILE'");
  EXPECT_EQ(ParseJobText("[a]\nincludex foo\n", "job.fio", JobFileFacts{}).status().message(),
            "job.fio:2: 'includex foo': expected 'include FILE'");
}

TEST(JobFileInclude, ASkippedSectionsIncludesAreNotRead) {
  auto jobs = ParseJobText("[a]\ninclude /nonexistent/x.fio\n[b]\n", "job.fio", JobFileFacts{},
                           {.sections = {"b"}});
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ((*jobs)[0].name, "b");
}

TEST(JobFileInclude, AllIncludedFilesTogetherAreBounded) {
  ScratchDir dir;
  std::string comments;
  while (comments.size() < 1040000) comments += "; " + std::string(97, 'c') + "\n";
  dir.Write("big.inc", comments);
  std::string top = "[j]\n";
  for (int i = 0; i < 17; ++i) top += "include big.inc\n";
  const std::string path = dir.Write("top.fio", top);
  EXPECT_EQ(ReadError(path), path + ":18: the included files come to over 16 MiB together");
}

TEST(JobFileInclude, TheJobFileItselfMustBeASmallRegularFile) {
  ScratchDir dir;
  auto missing = ReadJobFile(dir.path() + "/none.fio", JobFileFacts{});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "cannot read fio job file " + dir.path() + "/none.fio: No such file or directory");
  EXPECT_THAT(ReadError("/dev/zero"), HasSubstr("is not a regular file"));
  const std::string big = dir.Write("big.fio", "[a]\n" + std::string(2 << 20, ';'));
  EXPECT_EQ(ReadError(big), "fio job file " + big + " is over 1 MiB");
}

}  // namespace
}  // namespace stormark::controller::fio
