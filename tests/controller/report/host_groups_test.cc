#include "controller/report/host_groups.h"

#include <sstream>
#include <string>
#include <vector>

#include "controller/report/report_table.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using test_runs::kBase;

std::string Name(const char* prefix, size_t i) { return fmt::format("{}{:02}", prefix, i); }

// `aoe` hosts reached over AoE and `local` local ones, each at 100 MiB/s and 1 ms.
PhaseOutcome Fleet(size_t aoe, size_t local) {
  PhaseOutcome outcome;
  outcome.plan = test_runs::WritePlan();
  outcome.start_at_unix_nanos = kBase;
  outcome.start_skew_nanos = 0;
  for (size_t i = 0; i < aoe + local; ++i) {
    HostOutcome host =
        test_runs::SucceededHost(i < aoe ? Name("aoe", i) : Name("db", i - aoe), 100);
    host.transport = i < aoe ? "AoE" : "local";
    outcome.hosts.push_back(std::move(host));
  }
  return outcome;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string LineStarting(const std::string& text, const std::string& start) {
  for (const std::string& line : Lines(text)) {
    if (line.starts_with(start)) return line;
  }
  return "";
}

std::string Table(const PhaseOutcome& outcome, const TableView& view = {}) {
  return FormatPhaseTable(outcome, Summarize(outcome), 0, 1, 1, view);
}

TEST(HostGroups, PastThirtyTwoHostsTheTableIsARowPerGroup) {
  PhaseOutcome outcome = Fleet(20, 20);
  outcome.hosts[3] = test_runs::SucceededHost("aoe03", 50);  // Half the speed of its group.
  outcome.hosts[3].transport = "AoE";
  outcome.hosts[25] = test_runs::UnreachableHost("db05");
  outcome.hosts[25].transport = "local";
  const std::string text = Table(outcome);

  EXPECT_THAT(text, HasSubstr("by via and target"));
  EXPECT_THAT(text, HasSubstr("MiB/s min"));
  const std::string aoe = LineStarting(text, "  AoE scratch ");
  EXPECT_THAT(aoe, HasSubstr(" 20 "));
  EXPECT_THAT(aoe, HasSubstr(" 50.0 "));   // the min
  EXPECT_THAT(aoe, HasSubstr(" 100.0 "));  // p50 and max
  EXPECT_THAT(aoe, HasSubstr("20 ok"));
  EXPECT_THAT(LineStarting(text, "  local scratch "), HasSubstr("19 ok"));
  // Unreachable, on its agent's default target: its own group.
  EXPECT_THAT(LineStarting(text, "  no target chosen "), HasSubstr("1 ERROR"));
  EXPECT_THAT(LineStarting(text, "  all hosts "), HasSubstr("39 ok, 1 ERROR"));
  // The slow host and the unreachable one, by name.
  EXPECT_THAT(LineStarting(text, "  outliers in AoE scratch: "),
              HasSubstr("aoe03 (50.0 MiB/s, low)"));
  EXPECT_THAT(LineStarting(text, "  outliers in no target chosen: "), HasSubstr("db05 (ERROR)"));
  EXPECT_THAT(text, HasSubstr("40 hosts in 3 groups by via and target; --all-hosts prints a row "
                              "per host"));
  // No host has a row of its own; the error note is there, once.
  EXPECT_EQ(LineStarting(text, "  aoe00 "), "");
  EXPECT_THAT(text, HasSubstr("  x db05: "));
  EXPECT_LT(Lines(text).size(), 16u) << text;
}

TEST(HostGroups, AllHostsPrintsARowPerHost) {
  TableView view;
  view.all_hosts = true;
  const std::string text = Table(Fleet(20, 20), view);
  EXPECT_NE(LineStarting(text, "  aoe00 "), "");
  EXPECT_NE(LineStarting(text, "  db19 "), "");
  EXPECT_THAT(text, Not(HasSubstr("by via and target")));
}

TEST(HostGroups, ThirtyTwoHostsStillHaveARowEach) {
  const std::string text = Table(Fleet(16, 16));
  EXPECT_NE(LineStarting(text, "  db15 "), "");
  EXPECT_THAT(text, Not(HasSubstr("by via and target")));
  EXPECT_THAT(Table(Fleet(17, 16)), HasSubstr("by via and target"));
}

TEST(HostGroups, HostsWithinTenPercentOfTheirGroupAreNotOutliers) {
  PhaseOutcome outcome = Fleet(40, 0);
  // 95..104 MiB/s: a spread any fleet has, however tight the quartiles.
  for (size_t i = 0; i < outcome.hosts.size(); ++i) {
    outcome.hosts[i] = test_runs::SucceededHost(Name("aoe", i), 95 + i % 10);
    outcome.hosts[i].transport = "AoE";
  }
  const std::string text = Table(outcome);
  EXPECT_THAT(text, HasSubstr("  no outliers: every host within its group's fences\n"));
  EXPECT_THAT(LineStarting(text, "  AoE scratch "), HasSubstr(" 95.0 "));
}

TEST(HostGroups, ASlowLatencyTailIsAnOutlier) {
  PhaseOutcome outcome = Fleet(0, 40);
  outcome.hosts[7] = test_runs::SucceededHost("db07", 100, 30'000'000);
  outcome.hosts[7].transport = "local";
  const std::string text = Table(outcome);
  EXPECT_THAT(LineStarting(text, "  outliers in local scratch: "),
              HasSubstr("db07 (p99 lat 30.0 ms, high)"));
}

TEST(HostGroups, ByLabelGroupsOnTheLabelsValue) {
  PhaseOutcome outcome = Fleet(0, 40);
  TableView view;
  view.group_by = "label:rack";
  for (size_t i = 0; i < 39; ++i) view.labels[Name("db", i)]["rack"] = i < 20 ? "r1" : "r2";
  const std::string text = Table(outcome, view);
  EXPECT_THAT(LineStarting(text, "  rack=r1 "), HasSubstr(" 20 "));
  EXPECT_THAT(LineStarting(text, "  rack=r2 "), HasSubstr(" 19 "));
  EXPECT_THAT(LineStarting(text, "  rack unset "), HasSubstr(" 1 "));
  EXPECT_THAT(text, HasSubstr("40 hosts in 3 groups by label rack"));
}

TEST(HostGroups, ANoteEveryHostSharesIsOneLine) {
  PhaseOutcome outcome = Fleet(0, 40);
  for (HostOutcome& host : outcome.hosts) host.result->add_warnings("maybe the page cache");
  outcome.hosts[9].result->add_warnings("only db09's");
  const std::string text = Table(outcome);
  EXPECT_THAT(text, HasSubstr("  * 40 hosts (db00, db01, db02 and 37 more): maybe the page "
                              "cache\n"));
  EXPECT_THAT(text, HasSubstr("  * db09: only db09's\n"));
  // The group's figure is marked, so it is never read without its note.
  EXPECT_THAT(LineStarting(text, "  local scratch "), HasSubstr("100.0 *"));
}

TEST(HostGroups, GroupedLinesStopAfterTheirLimit) {
  std::vector<std::pair<std::string, std::string>> texts;
  for (size_t i = 0; i < 30; ++i) texts.emplace_back(Name("db", i), Name("note ", i));
  const std::string lines = GroupedLines("*", texts, 24);
  EXPECT_EQ(Lines(lines).size(), 25u);
  EXPECT_THAT(lines, HasSubstr("  * and 6 more (--all-hosts prints them all)\n"));
}

TEST(HostGroups, NameListNamesAFewAndCountsTheRest) {
  EXPECT_EQ(NameList({"a"}), "a");
  EXPECT_EQ(NameList({"a", "b"}), "a and b");
  EXPECT_EQ(NameList({"a", "b", "c", "d"}), "a, b, c and d");
  EXPECT_EQ(NameList({"a", "b", "c", "d", "e"}), "a, b, c and 2 more");
}

TEST(HostGroups, GroupByIsCheckedWithOneLine) {
  EXPECT_TRUE(CheckGroupBy("via").ok());
  EXPECT_TRUE(CheckGroupBy("target").ok());
  EXPECT_TRUE(CheckGroupBy("label:rack").ok());
  EXPECT_EQ(CheckGroupBy("label:").message(),
            "bad --group-by 'label:': give via (how the storage is reached, and the target), "
            "target, or label:KEY");
  EXPECT_FALSE(CheckGroupBy("rack").ok());
}

TEST(HostGroups, TheAgentsOfALargeFleetAreSummarized) {
  std::vector<std::string> hosts;
  for (size_t i = 0; i < 40; ++i) hosts.push_back(Name("db", i));
  RunRecord run = test_runs::MakeRun("r1", hosts, {});
  run.agents[4].error = "connection refused";
  const std::string text = FormatAgentsTable(run.agents, MakeTableView(false, "", run.agents));
  EXPECT_THAT(text, StartsWith("  40 agents: 39 answering, 1 UNAVAILABLE (db04)\n"));
  EXPECT_THAT(text, HasSubstr("  machine of 39 hosts (db00, db01, db02 and 36 more): "));
  EXPECT_THAT(text, HasSubstr("--all-hosts prints a row per agent"));
  EXPECT_LT(Lines(text).size(), 6u) << text;
  EXPECT_NE(
      LineStarting(FormatAgentsTable(run.agents, MakeTableView(true, "", run.agents)), "  db39 "),
      "");
}

}  // namespace
}  // namespace stormark::controller
