#include "agent/access/phase_owner.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

TEST(NewPhaseToken, Is128RandomBitsInHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    common::StatusOr<std::string> token = NewPhaseToken();
    ASSERT_TRUE(token.ok()) << token.status();
    EXPECT_THAT(*token, MatchesRegex("[0-9a-f]{32}"));
    seen.insert(*token);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(PhaseOwner, TheOwnerWithTheTokenMayActOnItsPhase) {
  PhaseOwner owner("CN=ci", "00112233445566778899aabbccddeeff");
  owner.Issue();
  EXPECT_TRUE(owner.Check("CN=ci", "00112233445566778899aabbccddeeff", "run", "p1").ok());
}

TEST(PhaseOwner, AnotherIdentityIsRefusedWithoutNamingTheOwner) {
  PhaseOwner owner("CN=ci", "00112233445566778899aabbccddeeff");
  for (bool issued : {false, true}) {
    if (issued) owner.Issue();
    common::Status refused =
        owner.Check("CN=other", "00112233445566778899aabbccddeeff", "abort", "p1");
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(refused.message(),
              "CN=other may not abort phase 'p1': it belongs to another identity (the one that "
              "prepared it)");
  }
}

TEST(PhaseOwner, BeforePrepareReturnedTheIdentityAloneWill) {
  PhaseOwner owner("CN=ci", "00112233445566778899aabbccddeeff");
  EXPECT_TRUE(owner.Check("CN=ci", "", "abort", "p1").ok());
  // A token given is still checked.
  EXPECT_FALSE(owner.Check("CN=ci", "00112233445566778899aabbccddeefe", "abort", "p1").ok());
  owner.Issue();
  common::Status refused = owner.Check("CN=ci", "", "abort", "p1");
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), HasSubstr("does not carry the phase token"));
}

TEST(PhaseOwner, AWrongTokenIsRefusedWithoutShowingTheRightOne) {
  PhaseOwner owner("CN=ci", "00112233445566778899aabbccddeeff");
  owner.Issue();
  for (const std::string& token : {std::string("00112233445566778899aabbccddeefe"),
                                   std::string("0011"), std::string(64, 'a')}) {
    common::Status refused = owner.Check("CN=ci", token, "clean up", "p1");
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << token;
    EXPECT_THAT(refused.message(), HasSubstr("CN=ci may not clean up phase 'p1'"));
    EXPECT_THAT(refused.message(), HasSubstr("carries the wrong phase token"));
    EXPECT_THAT(refused.message(), Not(HasSubstr("00112233")));
  }
}

TEST(PhaseOwner, NobodyOwnsAnEmptyOwner) {
  PhaseOwner nobody;
  EXPECT_FALSE(nobody.Check("", "", "run", "p1").ok());
  nobody.Issue();
  EXPECT_FALSE(nobody.Check("", "", "run", "p1").ok());
}

}  // namespace
}  // namespace stormark::agent
