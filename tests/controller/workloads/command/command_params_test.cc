#include "controller/workloads/command/command_params.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

TEST(SetCommandParameter, CommandIsAShellLineAndExecIsSplitAtSpaces) {
  stormark::v1::CommandSpec spec;
  ASSERT_TRUE(SetCommandParameter("exec", "tar  xf /srv/a.tar", &spec).ok());
  ASSERT_EQ(spec.argv_size(), 3);
  EXPECT_EQ(spec.argv(0), "tar");
  EXPECT_EQ(spec.argv(2), "/srv/a.tar");
  // The last of the two wins, so that --set overrides a plan's choice.
  ASSERT_TRUE(SetCommandParameter("command", "tar xf /srv/a.tar && sync", &spec).ok());
  EXPECT_EQ(spec.argv_size(), 0);
  EXPECT_EQ(spec.shell(), "tar xf /srv/a.tar && sync");
}

TEST(SetCommandParameter, SyncAndTimeout) {
  stormark::v1::CommandSpec spec;
  ASSERT_TRUE(SetCommandParameter("sync", "yes", &spec).ok());
  ASSERT_TRUE(SetCommandParameter("timeout", "10m", &spec).ok());
  EXPECT_TRUE(spec.sync());
  EXPECT_EQ(spec.timeout_ms(), 600'000u);
  spec.set_shell("make -j8");
  EXPECT_EQ(DescribeCommand(spec), "command `make -j8`, sync, timeout 600 s");
}

TEST(SetCommandParameter, BadValuesNameTheParameter) {
  stormark::v1::CommandSpec spec;
  EXPECT_THAT(std::string(SetCommandParameter("timeout", "soon", &spec).message()),
              HasSubstr("bad timeout 'soon'"));
  EXPECT_THAT(std::string(SetCommandParameter("command", "  ", &spec).message()),
              HasSubstr("bad command"));
  EXPECT_THAT(std::string(SetCommandParameter("exec", "", &spec).message()), HasSubstr("bad exec"));
  EXPECT_THAT(std::string(SetCommandParameter("sync", "2", &spec).message()), HasSubstr("sync"));
  EXPECT_THAT(std::string(SetCommandParameter("shell", "x", &spec).message()),
              HasSubstr("unknown command parameter 'shell'"));
}

TEST(DescribeCommand, LongLinesAreCut) {
  stormark::v1::CommandSpec spec;
  spec.set_shell(std::string(100, 'x'));
  EXPECT_EQ(DescribeCommand(spec).size(), std::string("command ``").size() + 60);
}

}  // namespace
}  // namespace stormark::controller
