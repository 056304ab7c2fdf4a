#include "controller/report/report_baseline.h"

#include <sstream>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
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
  EXPECT_THAT(text.status().message(), HasSubstr("hosts: local and aoe"));
}

TEST(FormatBaselineTables, AFleetShowsTheBaselineAndTheRowsAtEitherEndOfTheRatio) {
  // h000 ... h039 at 60 + h MiB/s, one repetition; against h010 (70 MiB/s).
  std::vector<HostOutcome> hosts;
  std::vector<std::string> names;
  for (uint64_t h = 0; h < 40; ++h) {
    names.push_back(fmt::format("h{:03}", h));
    hosts.push_back(SucceededHost(names.back(), 60 + h));
  }
  const RunRecord run = MakeRun("r1", names, {Phase(WritePlan(), std::move(hosts))});
  auto text = FormatBaselineTables(run, "h010");
  ASSERT_TRUE(text.ok()) << text.status();
  for (const char* shown : {"h000", "h004", "h010", "h035", "h039"}) {
    EXPECT_THAT(RowOf(*text, shown), Not(IsEmpty())) << shown;
  }
  for (const char* hidden : {"h005", "h020", "h034"}) {
    EXPECT_THAT(RowOf(*text, hidden), IsEmpty()) << hidden;
  }
  EXPECT_THAT(*text, HasSubstr("  40 rows; shown: h010's and the 5 lowest and 5 highest x base "
                               "of MiB/s; over every row: min 0.86, p50 1.14, max 1.41; "
                               "--all-hosts prints every row\n"));
  TableView every;
  every.all_hosts = true;
  auto all = FormatBaselineTables(run, "h010", every);
  ASSERT_TRUE(all.ok());
  EXPECT_THAT(RowOf(*all, "h020"), Not(IsEmpty()));
  EXPECT_THAT(*all, Not(HasSubstr("rows; shown")));
}

}  // namespace
}  // namespace stormark::controller
