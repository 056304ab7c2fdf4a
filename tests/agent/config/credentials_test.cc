#include "agent/config/credentials.h"

#include <pwd.h>
#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

TEST(LookUpCommandUser, ARootAgentRunsCommandsAsNobodyUnlessTold) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  if (getpwnam("nobody") == nullptr) GTEST_SKIP() << "no user nobody on this host";
  auto user = LookUpCommandUser("");
  ASSERT_TRUE(user.ok()) << user.status();
  EXPECT_EQ(user->name, "nobody");
  EXPECT_EQ(user->uid, getpwnam("nobody")->pw_uid);
  EXPECT_EQ(user->gid, getpwnam("nobody")->pw_gid);
  EXPECT_TRUE(user->switch_user);
  EXPECT_FALSE(user->is_root());
  EXPECT_THAT(user->groups, ::testing::Contains(user->gid));

  auto root = LookUpCommandUser("root");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_TRUE(root->is_root());
  EXPECT_FALSE(root->switch_user);
}

TEST(LookUpCommandUser, AnUnknownUserIsNamed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const auto user = LookUpCommandUser("no-such-user-xyz");
  EXPECT_EQ(user.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(user.status().message()), HasSubstr("commands.user 'no-such-user-xyz'"));
}

TEST(LookUpCommandUser, AnAgentThatIsNotRootRunsCommandsAsItself) {
  if (geteuid() == 0) GTEST_SKIP() << "needs a user other than root";
  auto user = LookUpCommandUser("");
  ASSERT_TRUE(user.ok()) << user.status();
  EXPECT_EQ(user->uid, geteuid());
  EXPECT_FALSE(user->switch_user);
  EXPECT_EQ(LookUpCommandUser("root").status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace stormark::agent
