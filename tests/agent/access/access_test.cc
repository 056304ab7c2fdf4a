#include "agent/access/access.h"

#include "agent/config/config.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class AccessConfigTest : public TempDirTest {
 protected:
  common::StatusOr<AgentConfig> Parse(const std::string& access) {
    return ParseAgentConfig(common::StrCat("targets:\n  scratch:\n    dir: ", dir(), "\n", access),
                            "agent.yaml");
  }
};

PeerIdentity UnixPeer(uid_t uid, gid_t gid, std::vector<gid_t> groups = {}) {
  PeerIdentity peer;
  peer.kind = PeerIdentity::Kind::kUnixUser;
  peer.uid = uid;
  peer.gid = gid;
  peer.groups = std::move(groups);
  return peer;
}

TEST_F(AccessConfigTest, ParsesNamesAndNumbers) {
  auto config = Parse("access:\n  users: [root, 4242]\n  groups: [root, 4343]\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->access.users.size(), 2u);
  EXPECT_EQ(config->access.users[0].id, 0u);
  EXPECT_EQ(config->access.users[0].name, "root");
  EXPECT_EQ(config->access.users[1].id, 4242u);
  ASSERT_EQ(config->access.groups.size(), 2u);
  EXPECT_EQ(config->access.groups[0].id, 0u);
  EXPECT_EQ(config->access.groups[1].id, 4343u);
}

TEST_F(AccessConfigTest, NoAccessKeyAdmitsNobodyExtra) {
  auto config = Parse("");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->access.users.empty());
  EXPECT_TRUE(config->access.groups.empty());
}

TEST_F(AccessConfigTest, UnknownUserOrFieldNamesTheLine) {
  auto config = Parse("access:\n  users:\n    - no-such-user-xyz\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              AllOf(HasSubstr("agent.yaml:6"), HasSubstr("no user 'no-such-user-xyz'")));
  config = Parse("access:\n  groups: [no-such-group-xyz]\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("no group 'no-such-group-xyz'"));
  config = Parse("access:\n  people: [root]\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(),
              AllOf(HasSubstr("agent.yaml:5"), HasSubstr("unknown field 'access.people'")));
  config = Parse("access:\n  users: root\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("must be a list"));
  config = Parse("access: [root]\n");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.status().message(), HasSubstr("'access' must be a map"));
}

TEST(CheckUnixPeer, AdmitsRootAndTheAgentsOwnUserByDefault) {
  const AccessConfig none;
  EXPECT_TRUE(CheckUnixPeer(none, UnixPeer(0, 0), 1000).ok());
  EXPECT_TRUE(CheckUnixPeer(none, UnixPeer(1000, 1000), 1000).ok());
  const common::Status refused = CheckUnixPeer(none, UnixPeer(65534, 65534), 1000);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(),
              AllOf(HasSubstr("uid 65534"), HasSubstr("may not use this agent"),
                    HasSubstr("its own user (uid 1000)"), HasSubstr("access.users (none)"),
                    HasSubstr("access.groups (none)")));
}

TEST(CheckUnixPeer, AdmitsListedUsersAndMembersOfListedGroups) {
  AccessConfig access;
  access.users.push_back({4242, "alice"});
  access.groups.push_back({5000, "bench"});
  EXPECT_TRUE(CheckUnixPeer(access, UnixPeer(4242, 100), 0).ok());
  EXPECT_TRUE(CheckUnixPeer(access, UnixPeer(4343, 5000), 0).ok());              // primary
  EXPECT_TRUE(CheckUnixPeer(access, UnixPeer(4343, 100, {100, 5000}), 0).ok());  // supplementary
  const common::Status refused = CheckUnixPeer(access, UnixPeer(4343, 100, {100, 200}), 0);
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), AllOf(HasSubstr("uid 4343"), HasSubstr("access.users [alice]"),
                                       HasSubstr("access.groups [bench]")));
}

TEST(CheckUnixPeer, RefusesAPeerThatIsNoUnixUser) {
  PeerIdentity unknown;
  EXPECT_EQ(CheckUnixPeer(AccessConfig(), unknown, 0).code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace stormark::agent
