#include "controller/report/html/environment_section.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

TEST(EnvironmentTable, AColumnPerRowAndARowPerKeyWithDifferencesMarked) {
  const std::string html = EnvironmentTable({{"db1", "kernel", "Linux 6.1"},
                                             {"db1", "filesystem", "xfs"},
                                             {"db2", "kernel", "Linux 6.1"},
                                             {"db2", "filesystem", "ext4"}});
  EXPECT_THAT(html, HasSubstr("<th>db1</th><th>db2</th>"));
  EXPECT_THAT(html, HasSubstr("<tr><th>kernel</th><td>Linux 6.1</td><td>Linux 6.1</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"differs\"><th>filesystem</th><td>xfs</td>"
                              "<td>ext4</td></tr>"));
}

TEST(EnvironmentTable, AFactOnlyOneRowHasDiffers) {
  const std::string html =
      EnvironmentTable({{"a", "k", "v"}, {"b", "k", "v"}, {"b", "queue/scheduler", "mq"}});
  EXPECT_THAT(html, HasSubstr("<tr class=\"differs\"><th>queue/scheduler</th>"
                              "<td class=\"missing\">-</td><td>mq</td></tr>"));
}

TEST(EnvironmentTable, EscapesRowsKeysAndValues) {
  const std::string html = EnvironmentTable({{"<h>", "<k>", "<v>"}});
  EXPECT_THAT(html, Not(HasSubstr("<h>")));
  EXPECT_THAT(html, HasSubstr("&lt;h&gt;"));
  EXPECT_THAT(html, HasSubstr("&lt;k&gt;"));
  EXPECT_THAT(html, HasSubstr("&lt;v&gt;"));
  EXPECT_EQ(EnvironmentTable({}), "");
}

TEST(MachineAndTargetFacts, ComeFromTheAgentsInfo) {
  RunRecord run = MakeRun("r1", {"db1", "db2"}, {});
  run.agents[1].info.mutable_targets(0)->set_filesystem("ext4");
  (*run.agents[1].info.mutable_targets(0)->mutable_device_queue())["scheduler"] = "none";
  const auto machines = MachineFacts(run);
  ASSERT_FALSE(machines.empty());
  EXPECT_EQ(machines[0].row, "db1");
  const std::string targets = EnvironmentTable(TargetFacts(run));
  EXPECT_THAT(targets, HasSubstr("<th>db1 / scratch</th><th>db2 / scratch</th>"));
  EXPECT_THAT(targets, HasSubstr("<tr class=\"differs\"><th>filesystem</th><td>xfs</td>"));
  EXPECT_THAT(targets, HasSubstr("<th>queue/scheduler</th>"));
  EXPECT_THAT(targets, HasSubstr("<tr><th>device</th><td>/dev/md3</td><td>/dev/md3</td>"));
}

}  // namespace
}  // namespace stormark::controller
