#include "controller/report/report_baseline.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

// The line of `text` whose first cell is `host`.
std::string RowOf(const std::string& text, const std::string& host) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("  " + host + " ")) return line;
  }
  return "";
}

// local and aoe, each with `reps` repetitions; aoe at half local's rate.
RunRecord LocalVsAoe(int reps) {
  std::vector<PhaseOutcome> phases;
  for (int r = 0; r < reps; ++r) {
    phases.push_back(Phase(WritePlan(),
                           {SucceededHost("local", 100 + static_cast<uint64_t>(r)),
                            SucceededHost("aoe", 50 + static_cast<uint64_t>(r))},
                           r));
  }
  return MakeRun("r1", {"local", "aoe"}, std::move(phases));
}

TEST(FormatBaselineTables, RatiosAgainstTheBaselineHost) {
  auto text = FormatBaselineTables(LocalVsAoe(1), "local");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, StartsWith("Compared with local"));
  EXPECT_THAT(*text, HasSubstr("seq-write: stream write 1 GiB, bs 1 MiB"));
  EXPECT_THAT(RowOf(*text, "local"), ContainsRegex("100\\.0 +1\\.00"));
  EXPECT_THAT(RowOf(*text, "aoe"), ContainsRegex(" 50\\.0 +0\\.50"));
  EXPECT_THAT(*text, HasSubstr("one repetition each"));
}

TEST(FormatBaselineTables, MedianAndSpreadOverRepetitions) {
  auto text = FormatBaselineTables(LocalVsAoe(3), "local");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(RowOf(*text, "local"), HasSubstr("101.0 [100.0-102.0]"));
  EXPECT_THAT(RowOf(*text, "aoe"), HasSubstr("51.0 [50.0-52.0]"));
  EXPECT_THAT(RowOf(*text, "aoe"), HasSubstr("0.50"));
  EXPECT_THAT(*text, HasSubstr("median [min-max]"));
}

TEST(FormatBaselineTables, UnknownBaselineNamesTheHosts) {
  auto text = FormatBaselineTables(LocalVsAoe(1), "nfs");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(text.status().message(), HasSubstr("hosts: local, aoe"));
}

}  // namespace
}  // namespace stormark::controller
