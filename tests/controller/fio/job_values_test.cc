#include "controller/fio/job_values.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller::fio {
namespace {

using ::testing::HasSubstr;

JobFileFacts Facts() {
  JobFileFacts facts;
  facts.ncpus = 4;
  facts.mb_memory = 16384;
  facts.pagesize = 4096;
  facts.env = {{"SIZE", "64m"}, {"NUMJOBS", "4"}, {"EMPTY", ""}, {"KEYWORD", "$ncpus"}};
  return facts;
}

std::string Substituted(std::string_view line, bool unset_is_empty = false) {
  auto out = SubstituteLine(line, Facts(), unset_is_empty);
  EXPECT_TRUE(out.ok()) << line << ": " << out.status();
  return out.ok() ? *out : "<error>";
}

std::string SubstituteError(std::string_view line) {
  auto out = SubstituteLine(line, Facts(), false);
  EXPECT_FALSE(out.ok()) << line << " gave " << (out.ok() ? *out : "");
  return std::string(out.status().message());
}

std::string Evaluated(std::string_view value, int kb_base = 1024) {
  auto out = EvaluateValue(value, kb_base);
  EXPECT_TRUE(out.ok()) << value << ": " << out.status();
  return out.ok() ? *out : "<error>";
}

std::string EvaluateError(std::string_view value) {
  auto out = EvaluateValue(value, 1024);
  EXPECT_FALSE(out.ok()) << value << " gave " << (out.ok() ? *out : "");
  return std::string(out.status().message());
}

TEST(SubstituteLine, ReplacesEnvironmentVariablesAnywhereInTheLine) {
  EXPECT_EQ(Substituted("size=${SIZE}"), "size=64m");
  EXPECT_EQ(Substituted("numjobs=${NUMJOBS}"), "numjobs=4");
  EXPECT_EQ(Substituted("filename=/data/${NUMJOBS}/${NUMJOBS}"), "filename=/data/4/4");
  EXPECT_EQ(Substituted("description=x${EMPTY}y"), "description=xy");
  EXPECT_EQ(Substituted("filename=${UNCLOSED"), "filename=${UNCLOSED");
  EXPECT_EQ(Substituted("filename_format=f.$jobnum"), "filename_format=f.$jobnum");
}

TEST(SubstituteLine, AnUnsetVariableIsAnErrorUnlessAskedToBeFio) {
  EXPECT_EQ(SubstituteError("filename=${DIR}/f"),
            "${DIR} is not set (fio would substitute an empty string)");
  EXPECT_THAT(SubstituteError("x=${}"), HasSubstr("names no variable"));
  EXPECT_EQ(Substituted("filename=${DIR}/f", true), "filename=/f");
  EXPECT_EQ(Substituted("x=${}", true), "x=");
}

TEST(SubstituteLine, ReplacesKeywordsEvenInsideWords) {
  EXPECT_EQ(Substituted("iodepth=$ncpus"), "iodepth=4");
  EXPECT_EQ(Substituted("bs=$pagesize"), "bs=4096");
  EXPECT_EQ(Substituted("size=$mb_memory"), "size=16384");
  EXPECT_EQ(Substituted("description=$ncpusx"), "description=4x");
  EXPECT_EQ(Substituted("numjobs=${KEYWORD}"), "numjobs=4");  // ${} first, then keywords
}

TEST(SubstituteLine, KeywordArithmeticGoesThroughBcAndGivesAPlainNumber) {
  EXPECT_EQ(Substituted("size=8*$mb_memory"), "size=131072");  // bytes, as in fio
  EXPECT_EQ(Substituted("numjobs=$ncpus-1"), "numjobs=3");
  EXPECT_EQ(Substituted("iodepth=($ncpus*2)"), "iodepth=8");
  EXPECT_EQ(Substituted("size = 2*$mb_memory"), "size =32768");
  // No keyword: fio does not call bc, and 8*1024 stays for the option's parser.
  EXPECT_EQ(Substituted("size=8*1024"), "size=8*1024");
  // A quote keeps fio from calling bc.
  EXPECT_EQ(Substituted("description='$ncpus-1'"), "description='4-1'");
}

TEST(SubstituteLine, KeywordArithmeticThatBcCannotComputeFailsAsInFio) {
  EXPECT_THAT(SubstituteError("size=($ncpus*2)m"), HasSubstr("bc, which cannot compute it"));
  EXPECT_THAT(SubstituteError("filename=/tmp/$ncpus/x"), HasSubstr("bc"));
  EXPECT_THAT(SubstituteError("numjobs=$ncpus/0"), HasSubstr("division by zero"));
}

TEST(SubstituteLine, ALongLineSkipsBcAsFioDoes) {
  const std::string line = "description=" + std::string(120, 'a') + "-$ncpus";
  EXPECT_EQ(Substituted(line), "description=" + std::string(120, 'a') + "-4");
}

TEST(SubstituteLine, TheResultIsBoundedByFiosLineLength) {
  JobFileFacts facts = Facts();
  facts.env["BIG"] = std::string(5000, 'x');
  EXPECT_THAT(SubstituteLine("a=${BIG}${BIG}", facts, false).status().message(),
              HasSubstr("longer than fio's 8191 characters"));
}

TEST(EvaluateValue, LeavesWhatIsNotAnExpression) {
  EXPECT_EQ(Evaluated("4k"), "4k");
  EXPECT_EQ(Evaluated("randread"), "randread");
  EXPECT_EQ(Evaluated("(a test)"), "(a test)");
  EXPECT_EQ(Evaluated("(4*1024),(8*1024)"), "(4*1024),(8*1024)");
  EXPECT_EQ(Evaluated("8*1024"), "8*1024");
  EXPECT_EQ(Evaluated(""), "");
}

TEST(EvaluateValue, ReplacesAnExpressionWithItsResult) {
  EXPECT_EQ(Evaluated("(2*1024)"), "2048");
  EXPECT_EQ(Evaluated("((((((((((1+1)*2)+1)*2)+1)*2)+1)*2)+1)*2)"), "94");
  EXPECT_EQ(Evaluated("(2*1024)m"), "2048m");
  EXPECT_EQ(Evaluated("(2*1024) m"), "2048m");
  EXPECT_EQ(Evaluated("(4*1024)KiB"), "4096KiB");
  EXPECT_EQ(Evaluated("(1.5*1024)m"), "1536m");
  EXPECT_EQ(Evaluated("(60*2)s"), "120s");
  EXPECT_EQ(Evaluated("(2*12)h"), "24h");
}

TEST(EvaluateValue, KeepsAnExpressionWhoseUnitWouldReadDifferentlyOutside) {
  EXPECT_EQ(Evaluated("(2*1024)m", 1000), "(2*1024)m");  // expression units ignore kb_base
  EXPECT_EQ(Evaluated("(2)k", 1000), "(2)k");
  EXPECT_EQ(Evaluated("(60*2)s", 1000), "120s");
  EXPECT_EQ(Evaluated("(1500)ms"), "(1500)ms");  // 1 s for runtime, 1.5 s for thinktime
  EXPECT_EQ(Evaluated("(1)t"), "(1)t");
  EXPECT_EQ(Evaluated("(1)pib"), "(1)pib");
  EXPECT_EQ(Evaluated("(1m+30s)"), "(1m+30s)");
  EXPECT_EQ(Evaluated("(1)+(2)k"), "(1)+(2)k");
}

TEST(EvaluateValue, AMalformedExpressionIsAnError) {
  EXPECT_EQ(EvaluateError("(2*)"), "bad expression '(2*)': expected a number after '*'");
  EXPECT_THAT(EvaluateError("(1/0)"), HasSubstr("division by zero"));
  EXPECT_THAT(EvaluateError("(10-2)"), HasSubstr("splits a numeric value at '-'"));
  EXPECT_THAT(EvaluateError("(4*1024*1024*1024)"),
              HasSubstr("4294967296 does not fit; put a unit after the ')'"));
  EXPECT_EQ(Evaluated("(4*1024*1024)k"), "4194304k");  // a unit lifts fio's int limit
}

TEST(MachineFacts, ComeFromThisMachine) {
  const JobFileFacts facts = MachineJobFileFacts();
  EXPECT_GE(facts.ncpus, 1);
  EXPECT_GT(facts.mb_memory, 0u);
  EXPECT_GE(facts.pagesize, 4096u);
  EXPECT_EQ(facts.pagesize & (facts.pagesize - 1), 0u);
  EXPECT_FALSE(facts.env.empty());
}

}  // namespace
}  // namespace stormark::controller::fio
