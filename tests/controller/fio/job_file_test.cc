#include "controller/fio/job_file.h"

#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller::fio {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

JobFileFacts Facts() {
  JobFileFacts facts;
  facts.ncpus = 4;
  facts.mb_memory = 16384;
  facts.pagesize = 4096;
  facts.env = {{"SIZE", "64m"}, {"NUMJOBS", "2"}};
  return facts;
}

std::vector<FioJob> Read(std::string_view text, const ReadOptions& options = {}) {
  auto jobs = ParseJobText(text, "job.fio", Facts(), options);
  EXPECT_TRUE(jobs.ok()) << jobs.status();
  return jobs.ok() ? *jobs : std::vector<FioJob>{};
}

std::string Error(std::string_view text, const ReadOptions& options = {}) {
  auto jobs = ParseJobText(text, "job.fio", Facts(), options);
  EXPECT_FALSE(jobs.ok()) << "read " << (jobs.ok() ? jobs->size() : 0) << " jobs";
  return std::string(jobs.status().message());
}

std::vector<std::string> Options(const FioJob& job) {
  std::vector<std::string> out;
  for (const JobOption& option : job.options) {
    out.push_back(option.has_value ? option.name + "=" + option.value : option.name);
  }
  return out;
}

using Place = std::tuple<std::string, int, int, int>;  // name, clone, run, reporting group
std::vector<Place> Places(const std::vector<FioJob>& jobs) {
  std::vector<Place> out;
  for (const FioJob& job : jobs) {
    out.emplace_back(job.name, job.clone, job.run_group, job.reporting_group);
  }
  return out;
}

TEST(JobFile, AGlobalSectionReachesOnlyTheJobsBelowIt) {
  const auto jobs = Read("[global]\nbs=4k\n[a]\n[global]\nbs=8k\niodepth=2\n[b]\n");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_THAT(Options(jobs[0]), ElementsAre("bs=4k"));
  EXPECT_THAT(Options(jobs[1]), ElementsAre("bs=8k", "iodepth=2"));
  EXPECT_EQ(jobs[1].options[0].line, 5);
}

TEST(JobFile, ALaterOptionReplacesAnEarlierOneAtItsOwnPlace) {
  const auto jobs = Read("[global]\nbs=4k\nrw=read\n[a]\nbs=8k\nbs=16k\n");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_THAT(Options(jobs[0]), ElementsAre("rw=read", "bs=16k"));
  EXPECT_EQ(FindOption(jobs[0], "bs")->line, 6);
  EXPECT_EQ(FindOption(jobs[0], "iodepth"), nullptr);
}

TEST(JobFile, ASectionNamedGlobalSomethingIsGlobal) {
  const auto jobs = Read("[global-late]\nbs=4k\n[a]\n");
  EXPECT_THAT(Places(jobs), ElementsAre(Place{"a", 0, 0, 0}));
}

TEST(JobFile, CommentsAndBlanksGoAsFioStripsThem) {
  const auto jobs = Read(
      "; header\n  # indented comment\n\n[a] ; the job\r\n"
      "  bs=4k # four\r\nrw=read;x\nbs_unaligned\t\nfilename=a#b\n  \t\n");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].line, 4);
  EXPECT_THAT(Options(jobs[0]), ElementsAre("bs=4k", "rw=read", "bs_unaligned", "filename=a"));
  EXPECT_FALSE(jobs[0].options[2].has_value);
}

TEST(JobFile, BlanksBeforeTheEqualsSignGoButABlankAfterItIsAnError) {
  EXPECT_THAT(Options(Read("[a]\nbs =4k\n")[0]), ElementsAre("bs=4k"));
  EXPECT_EQ(Error("[a]\nbs = 4k\n"),
            "job.fio:2: 'bs = 4k': fio keeps the blank after '=' and then ignores the unit or "
            "rejects the value; write 'bs=4k'");
  EXPECT_THAT(Options(Read("[a]\nsize=\n")[0]), ElementsAre("size="));
  EXPECT_EQ(Error("[a]\n=4k\n"), "job.fio:2: '=4k' has no option name");
}

TEST(JobFile, AnOptionBeforeAnySectionIsAnError) {
  EXPECT_EQ(Error("bs=4k\n[a]\n"),
            "job.fio:1: 'bs=4k' comes before any [section] header: a fio job file starts with "
            "[global] or [jobname] (fio: \"option outside of [] job section\")");
}

TEST(JobFile, AYamlPlanIsToldApartAtItsFirstLine) {
  const std::string plan = "# a stormark plan\nname: nightly\nphases:\n  - workload: randio\n";
  EXPECT_FALSE(LooksLikeJobFile(plan));
  EXPECT_THAT(Error(plan), HasSubstr("job.fio:2: 'name: nightly' comes before any [section]"));
  EXPECT_TRUE(LooksLikeJobFile("; fio\n\n  [global] ; defaults\nbs=4k\n"));
  EXPECT_FALSE(LooksLikeJobFile(""));
  EXPECT_FALSE(LooksLikeJobFile("[]\n"));
}

TEST(JobFile, MalformedSectionHeadersAreErrors) {
  EXPECT_THAT(Error("[job\nbs=4k\n"), HasSubstr("job.fio:1: '[job' is not a section header"));
  EXPECT_THAT(Error("[]\n"), HasSubstr("job.fio:1: '[]' is not a section header"));
  EXPECT_THAT(Error("[" + std::string(256, 'n') + "]\n"), HasSubstr("longer than fio's 255"));
  EXPECT_EQ(Error("[global]\nbs=4k\n"),
            "job.fio: no jobs: fio needs a section other than [global]");
  EXPECT_THAT(Error("; nothing\n"), HasSubstr("no jobs"));
}

TEST(JobFile, VariablesAndKeywordsAreSubstituted) {
  const auto jobs = Read(
      "[a]\nsize=${SIZE}\nnumjobs=${NUMJOBS}\niodepth=$ncpus\nbs=$pagesize\n"
      "io_size=8*$mb_memory\n");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_THAT(Options(jobs[1]),
              ElementsAre("size=64m", "numjobs=2", "iodepth=4", "bs=4096", "io_size=131072"));
}

TEST(JobFile, AnUnsetVariableIsAnErrorNamingTheLineUnlessFiosWayIsAsked) {
  EXPECT_EQ(Error("[a]\n\nfilename=${UNSET}/f\n"),
            "job.fio:3: ${UNSET} is not set (fio would substitute an empty string)");
  const auto jobs =
      Read("[a]\nfilename=${UNSET}/f\n", {.sections = {}, .unset_variables_are_empty = true});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_THAT(Options(jobs[0]), ElementsAre("filename=/f"));
}

TEST(JobFile, ArithmeticIsEvaluatedWithTheUnitKept) {
  const auto jobs = Read(
      "[a]\nsize=(2*1024)m\niodepth=((((((((((1+1)*2)+1)*2)+1)*2)+1)*2)+1)*2)\n"
      "runtime=(60*2)s\ndescription=(a test)\nio_size=(1m+512k)\n");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_THAT(Options(jobs[0]), ElementsAre("size=2048m", "iodepth=94", "runtime=120s",
                                            "description=(a test)", "io_size=(1m+512k)"));
}

TEST(JobFile, UnderKbBase1000AnExpressionWithASizeUnitStaysWhole) {
  const auto jobs = Read("[global]\nsize=(2*1024)m\n[a]\nkb_base=1000\n[b]\n");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_THAT(Options(jobs[0]), ElementsAre("size=(2*1024)m", "kb_base=1000"));
  EXPECT_THAT(Options(jobs[1]), ElementsAre("size=2048m"));
  EXPECT_EQ(Error("[a]\nkb_base=1000k\n"), "job.fio:2: kb_base '1000k': expected 1024 or 1000");
}

TEST(JobFile, BadArithmeticNamesTheLineAndOption) {
  EXPECT_EQ(Error("[a]\nbs=4k\nsize=(2*)\n"),
            "job.fio:3: size: bad expression '(2*)': expected a number after '*'");
  EXPECT_EQ(Error("[a]\nsize=(1024/0)\n"),
            "job.fio:2: size: bad expression '(1024/0)': division by zero");
  EXPECT_THAT(Error("[a]\nsize=(2147483647*2147483647*4)k\n"),
              HasSubstr("job.fio:2: size: bad expression"));
  EXPECT_THAT(Error("[global]\nsize=(1/0)\n[a]\n"), HasSubstr("job.fio:2: size:"));
}

TEST(JobFile, NumjobsClonesTheJobUnderOneName) {
  const auto jobs = Read("[a]\nnumjobs=3\n[b]\nnumjobs=1k\nnumjobs=2\n");
  EXPECT_THAT(Places(jobs),
              ElementsAre(Place{"a", 0, 0, 0}, Place{"a", 1, 0, 0}, Place{"a", 2, 0, 0},
                          Place{"b", 0, 0, 0}, Place{"b", 1, 0, 0}));
  EXPECT_EQ(Read("[a]\nnumjobs=4k\n").size(), 4096u);  // fio parses numjobs as a size
}

TEST(JobFile, NumjobsIsBoundedByFiosJobLimit) {
  EXPECT_EQ(Error("[a]\nnumjobs=1000000\n"),
            "job.fio:2: numjobs=1000000 makes more than fio's 4096 jobs (REAL_MAX_JOBS) with the "
            "0 before it");
  EXPECT_THAT(Error("[a]\nnumjobs=4000\n[b]\nnumjobs=97\n"),
              HasSubstr("job.fio:4: numjobs=97 makes more than fio's 4096 jobs"));
  EXPECT_THAT(Error("[a]\nnumjobs=0\n"), HasSubstr("job.fio:2: numjobs=0: fio then creates jobs"));
  EXPECT_THAT(Error("[a]\nnumjobs=50%\n"), HasSubstr("job.fio:2: numjobs: expected a number"));
  EXPECT_THAT(Error("[a]\nnumjobs=lots\n"), HasSubstr("job.fio:2: numjobs: bad size 'lots'"));
}

TEST(JobFile, StonewallWaitsAndNewGroupOnlyReports) {
  const auto jobs = Read(
      "[a]\nstonewall\n[b]\nnew_group\n[c]\n[d]\nwait_for_previous\n[e]\nstonewall=0\n"
      "[f]\nnew_group=1\nnumjobs=2\n");
  EXPECT_THAT(Places(jobs),
              ElementsAre(Place{"a", 0, 0, 0}, Place{"b", 0, 0, 1}, Place{"c", 0, 0, 1},
                          Place{"d", 0, 1, 2}, Place{"e", 0, 1, 2}, Place{"f", 0, 1, 3},
                          Place{"f", 1, 1, 3}));
  EXPECT_THAT(Error("[a]\n[b]\nstonewall=yes\n"),
              HasSubstr("job.fio:3: stonewall='yes': expected no value, 0 or 1"));
}

TEST(JobFile, AGlobalStonewallSeparatesEveryJob) {
  const auto jobs = Read("[global]\nstonewall\n[a]\n[b]\n[c]\n");
  EXPECT_THAT(Places(jobs),
              ElementsAre(Place{"a", 0, 0, 0}, Place{"b", 0, 1, 1}, Place{"c", 0, 2, 2}));
}

TEST(JobFile, WaitForNamesExactlyOneEarlierJob) {
  const auto jobs = Read("[a]\nnumjobs=2\n[b]\nname=renamed\n[c]\nwait_for=renamed\n");
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[2].name, "renamed");
  EXPECT_EQ(jobs[2].section, "b");
  EXPECT_EQ(jobs[3].wait_for, "renamed");
  EXPECT_EQ(Error("[a]\n[b]\nwait_for=nope\n"),
            "job.fio:3: wait_for=nope: no job above is named 'nope' (fio needs it defined "
            "first); the jobs above are: a");
  EXPECT_THAT(Error("[b]\nwait_for=a\n[a]\n"), HasSubstr("the jobs above are: none"));
  EXPECT_EQ(Error("[j]\nwait_for=j\n"), "job.fio:2: wait_for=j: a job cannot wait for itself");
  EXPECT_THAT(Error("[a]\n[a]\n[b]\nwait_for=a\n"),
              HasSubstr("job.fio:4: wait_for=a: 2 jobs above are named 'a'"));
  EXPECT_THAT(Error("[a]\n[b]\nwait_for\n"), HasSubstr("job.fio:3: wait_for needs a job name"));
}

TEST(JobFile, SectionsKeepOnlyTheNamedJobsAndEveryGlobal) {
  const std::string text =
      "[global]\nbs=4k\n[light]\niodepth=1\n[global]\nrw=write\n[heavy]\nstonewall\n"
      "iodepth=(2*)\n[last]\niodepth=64\n";
  const auto jobs = Read(text, {.sections = {"last"}});
  EXPECT_THAT(Places(jobs), ElementsAre(Place{"last", 0, 0, 0}));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_THAT(Options(jobs[0]), ElementsAre("bs=4k", "rw=write", "iodepth=64"));
  EXPECT_EQ(Error(text, {.sections = {"medium"}}),
            "job.fio: --section 'medium' names no job; the jobs are: light, heavy, last");
  EXPECT_THAT(Error("[a]\n[b]\nwait_for=a\n", {.sections = {"b"}}),
              HasSubstr("no job above is named 'a'"));
}

TEST(JobFile, HostileInputIsRefusedWithALocation) {
  EXPECT_EQ(Error("[a]\nfilename=" + std::string(2 << 20, 'x') + "\n"),
            "job.fio: it is over 1 MiB, the limit for a fio job file");
  EXPECT_EQ(Error("[a]\nfilename=" + std::string(9000, 'x') + "\n"),
            "job.fio:2: the line is longer than fio's 8191 characters (fio would split it)");
  EXPECT_EQ(Error(std::string("[a]\nbs=4k\0\n", 11)),
            "job.fio:2: a NUL byte: this is not a text file");
  const std::string big = std::string(8000, 'x');
  EXPECT_EQ(Error("[global]\na=" + big + "\nb=" + big + "\nc=" + big + "\n[j]\nnumjobs=4096\n"),
            "job.fio:5: the jobs' options come to over 64 MiB");
}

}  // namespace
}  // namespace stormark::controller::fio
