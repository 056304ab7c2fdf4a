#include "agent/access/authz.h"

#include <fstream>
#include <string>

#include "agent/config/config.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using stormark::v1::PhaseSpec;
using stormark::v1::StreamSpec;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;

PhaseSpec Stream(const std::string& target, StreamSpec::Direction direction) {
  PhaseSpec spec;
  spec.set_phase_id("p1");
  spec.set_target(target);
  spec.mutable_stream()->set_direction(direction);
  spec.mutable_stream()->set_size_bytes(1 << 20);
  spec.mutable_stream()->set_block_size(1 << 16);
  return spec;
}

PhaseSpec Command(const std::string& target, bool hook) {
  PhaseSpec spec;
  spec.set_phase_id("p1");
  spec.set_target(target);
  spec.mutable_command()->add_argv("true");
  spec.mutable_command()->set_hook(hook);
  return spec;
}

Identity Certificate(const std::string& cn, std::vector<std::string> sans = {}) {
  Identity id;
  id.kind = Identity::Kind::kCertificate;
  id.name = "CN=" + cn;
  id.common_name = cn;
  id.subject_alt_names = std::move(sans);
  return id;
}

Identity LocalUser(const std::string& user, std::vector<std::string> groups = {}) {
  Identity id;
  id.kind = Identity::Kind::kLocal;
  id.name = common::StrCat("user ", user);
  id.user = user;
  id.groups = std::move(groups);
  return id;
}

Identity Unauthenticated(const std::string& address) {
  Identity id;
  id.name = "unauthenticated " + address;
  return id;
}

TargetConfig Target(const std::string& kind, bool disposable = false) {
  TargetConfig target;
  target.name = kind;
  target.kind = kind;
  target.disposable = disposable;
  return target;
}

class AuthzTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::ofstream(dir() + "/disk1.img") << std::string(1 << 20, 'x');
    std::ofstream(dir() + "/spare.img") << std::string(1 << 20, 'x');
  }

  // Parses `identities` (YAML lines) under a config with targets scratch (a directory),
  // disk1 (a block file that is not disposable) and spare (a disposable one), as
  // "agent.yaml" with the identities from line 5.
  common::StatusOr<AgentConfig> Parse(const std::string& identities) {
    return ParseAgentConfig(common::StrCat("targets:\n"
                                           "  scratch: {dir: ",
                                           dir(),
                                           "}\n"
                                           "  disk1: {block: ",
                                           dir(),
                                           "/disk1.img}\n"
                                           "  spare: {block: ",
                                           dir(), "/spare.img, disposable: true}\n", identities),
                            "agent.yaml");
  }

  AgentConfig MustParse(const std::string& identities) {
    common::StatusOr<AgentConfig> config = Parse(identities);
    EXPECT_TRUE(config.ok()) << config.status();
    return config.ok() ? *config : AgentConfig();
  }

  // The brief's example.
  static constexpr char kExample[] =
      "identities:\n"
      "  - match: {cn: ci-runner}\n"
      "    targets: [scratch]\n"
      "    write: true\n"
      "    commands: false\n"
      "  - match: {user: alice}\n"
      "    targets: [scratch, disk1]\n"
      "    write: false\n";

  common::Status Check(const AgentConfig& config, const Identity& caller, const PhaseSpec& spec) {
    return CheckAccess(config.identities, caller, spec, config.FindTarget(spec.target()));
  }
};

TEST_F(AuthzTest, WithoutRulesEveryCallerMayDoEverything) {
  const AgentConfig config = MustParse("");
  EXPECT_TRUE(config.identities.empty());
  const Identity anyone = Unauthenticated("ipv4:10.0.0.5");
  EXPECT_TRUE(Check(config, anyone, Stream("disk1", StreamSpec::WRITE)).ok());
  EXPECT_TRUE(Check(config, anyone, Command("scratch", true)).ok());
}

TEST_F(AuthzTest, ParsesTheExample) {
  const AgentConfig config = MustParse(kExample);
  ASSERT_EQ(config.identities.size(), 2u);
  const IdentityRule& ci = config.identities[0];
  EXPECT_EQ(ci.cn, "ci-runner");
  EXPECT_EQ(ci.targets, std::vector<std::string>{"scratch"});
  EXPECT_TRUE(ci.write);
  EXPECT_FALSE(ci.commands);
  EXPECT_FALSE(ci.hooks);
  EXPECT_FALSE(ci.tuning);
  EXPECT_EQ(ci.where, "agent.yaml:6");
  EXPECT_EQ(ci.Describe(), "identities rule at agent.yaml:6 (cn: ci-runner)");
  EXPECT_EQ(config.identities[1].user, "alice");
  EXPECT_FALSE(config.identities[1].write);
}

TEST_F(AuthzTest, AllowedPhaseOfAMatchingIdentityPasses) {
  const AgentConfig config = MustParse(kExample);
  EXPECT_TRUE(Check(config, Certificate("ci-runner"), Stream("scratch", StreamSpec::WRITE)).ok());
  EXPECT_TRUE(Check(config, LocalUser("alice"), Stream("disk1", StreamSpec::READ)).ok());
  // A read of a dir target reads a file of the phase's own: not a write.
  EXPECT_TRUE(Check(config, LocalUser("alice"), Stream("scratch", StreamSpec::READ)).ok());
}

TEST_F(AuthzTest, ReadOnlyIdentityIsRefusedAWritePhaseNamingTheRule) {
  const AgentConfig config = MustParse(kExample);
  common::Status refused = Check(config, LocalUser("alice"), Stream("disk1", StreamSpec::WRITE));
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(),
            "user alice may not write to target 'disk1' (stream): identities rule at "
            "agent.yaml:10 (user: alice) has write: false");
}

TEST_F(AuthzTest, ATargetTheRuleDoesNotListIsRefused) {
  const AgentConfig config = MustParse(kExample);
  common::Status refused =
      Check(config, Certificate("ci-runner"), Stream("disk1", StreamSpec::READ));
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(),
            "CN=ci-runner may not use target 'disk1': identities rule at agent.yaml:6 "
            "(cn: ci-runner) has targets: [scratch]");
}

TEST_F(AuthzTest, CommandsHooksAndTuningNeedTheirOwnRights) {
  const AgentConfig config = MustParse(kExample);
  common::Status refused = Check(config, Certificate("ci-runner"), Command("scratch", false));
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), HasSubstr("CN=ci-runner may not run commands"));
  EXPECT_THAT(refused.message(), HasSubstr("has commands: false"));
  refused = Check(config, Certificate("ci-runner"), Command("scratch", true));
  EXPECT_THAT(refused.message(), HasSubstr("may not run hooks"));
  EXPECT_THAT(refused.message(), HasSubstr("has hooks: false"));
  PhaseSpec tuned = Stream("scratch", StreamSpec::WRITE);
  (*tuned.mutable_tuning())["read_ahead_kb"] = "4096";
  refused = Check(config, Certificate("ci-runner"), tuned);
  EXPECT_THAT(refused.message(), HasSubstr("may not tune the device of target 'scratch'"));
  EXPECT_THAT(refused.message(), HasSubstr("has tuning: false"));

  const AgentConfig all = MustParse(
      "identities:\n"
      "  - match: {cn: lab}\n"
      "    write: true\n"
      "    commands: true\n"
      "    hooks: true\n"
      "    tuning: true\n");
  EXPECT_TRUE(Check(all, Certificate("lab"), Command("scratch", false)).ok());
  EXPECT_TRUE(Check(all, Certificate("lab"), Command("disk1", true)).ok());
  EXPECT_TRUE(Check(all, Certificate("lab"), tuned).ok());
}

TEST_F(AuthzTest, AnIdentityNoRuleMatchesMayPrepareNothing) {
  const AgentConfig config = MustParse(kExample);
  for (const Identity& caller :
       {Certificate("intruder"), LocalUser("bob"), Unauthenticated("ipv4:1.2.3.4")}) {
    common::Status refused = Check(config, caller, Stream("scratch", StreamSpec::READ));
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(refused.message(),
              common::StrCat(caller.name,
                             " may not prepare phases on this agent: none of its "
                             "identities rules (agent.yaml:6) matches it"));
  }
  // A local user named like a certificate is not that certificate, and the reverse.
  EXPECT_FALSE(Check(config, LocalUser("ci-runner"), Stream("scratch", StreamSpec::READ)).ok());
  EXPECT_FALSE(Check(config, Certificate("alice"), Stream("scratch", StreamSpec::READ)).ok());
}

TEST_F(AuthzTest, TheLocalOperatorIsNotLimited) {
  const AgentConfig config = MustParse(kExample);
  Identity root = LocalUser("root");
  root.name = "local operator (unix socket)";
  root.local_operator = true;
  EXPECT_TRUE(Check(config, root, Stream("spare", StreamSpec::WRITE)).ok());
  EXPECT_TRUE(Check(config, root, Command("disk1", true)).ok());
}

TEST_F(AuthzTest, TheFirstMatchingRuleDecides) {
  const AgentConfig config = MustParse(
      "identities:\n"
      "  - match: {san: ci.example.com}\n"
      "    targets: [spare]\n"
      "    write: true\n"
      "  - match: {cn: ci-runner}\n"
      "    write: false\n"
      "  - match: {group: bench}\n"
      "    targets: [scratch]\n"
      "    write: true\n");
  // Its SAN matches the first rule before its CN matches the second.
  EXPECT_TRUE(Check(config, Certificate("ci-runner", {"ci.example.com"}),
                    Stream("spare", StreamSpec::WRITE))
                  .ok());
  EXPECT_THAT(Check(config, Certificate("ci-runner"), Stream("spare", StreamSpec::WRITE)).message(),
              HasSubstr("agent.yaml:9 (cn: ci-runner) has write: false"));
  EXPECT_TRUE(
      Check(config, LocalUser("carol", {"users", "bench"}), Stream("scratch", StreamSpec::WRITE))
          .ok());
}

TEST_F(AuthzTest, SeveralMatchFieldsMustAllHold) {
  const AgentConfig config = MustParse(
      "identities:\n"
      "  - match: {cn: ci-runner, san: ci.example.com}\n"
      "    write: true\n");
  EXPECT_TRUE(Check(config, Certificate("ci-runner", {"ci.example.com"}),
                    Stream("scratch", StreamSpec::WRITE))
                  .ok());
  EXPECT_FALSE(Check(config, Certificate("ci-runner"), Stream("scratch", StreamSpec::WRITE)).ok());
}

TEST(IdentityOf, NamesWhatStaysTheSameFromCallToCall) {
  PeerIdentity certificate;
  certificate.kind = PeerIdentity::Kind::kCertificate;
  certificate.common_name = "ci-runner";
  certificate.subject_alt_names = {"ci.example.com"};
  certificate.address = "ipv4:10.0.0.5:41234";
  Identity id = IdentityOf(certificate, 0);
  EXPECT_EQ(id.kind, Identity::Kind::kCertificate);
  EXPECT_EQ(id.name, "CN=ci-runner");
  EXPECT_EQ(id.subject_alt_names, std::vector<std::string>{"ci.example.com"});
  EXPECT_EQ(id.Describe(), "ipv4:10.0.0.5:41234 CN=ci-runner");
  EXPECT_FALSE(id.local_operator);

  PeerIdentity plain;
  plain.kind = PeerIdentity::Kind::kUnauthenticated;
  plain.address = "ipv6:[::1]:41234";
  EXPECT_EQ(IdentityOf(plain, 0).name, "unauthenticated ipv6:[::1]");
  EXPECT_FALSE(IdentityOf(plain, 0).local_operator);

  PeerIdentity alice;
  alice.kind = PeerIdentity::Kind::kUnixUser;
  alice.uid = 1000;
  alice.gid = 0;  // Group 0 is "root" on every Linux system.
  alice.pid = 4242;
  alice.user = "alice";
  id = IdentityOf(alice, 0);
  EXPECT_EQ(id.kind, Identity::Kind::kLocal);
  EXPECT_EQ(id.name, "uid 1000 (alice)");  // No pid: another process of alice is alice.
  EXPECT_EQ(id.user, "alice");
  EXPECT_THAT(id.groups, Contains("root"));
  EXPECT_FALSE(id.local_operator);
  // Root, and the agent's own user, are the local operator.
  EXPECT_TRUE(IdentityOf(alice, 1000).local_operator);
  alice.uid = 0;
  EXPECT_TRUE(IdentityOf(alice, 1000).local_operator);

  PeerIdentity nobody;
  EXPECT_EQ(IdentityOf(nobody, 0).name, "unknown");
  EXPECT_FALSE(IdentityOf(nobody, 0).local_operator);
}

TEST(PhaseWrites, SaysWhichPhasesChangeTheTarget) {
  const TargetConfig dir = Target("dir");
  const TargetConfig device = Target("block");
  const TargetConfig disposable = Target("block", true);
  EXPECT_TRUE(PhaseWrites(Stream("dir", StreamSpec::WRITE), dir));
  EXPECT_FALSE(PhaseWrites(Stream("dir", StreamSpec::READ), dir));
  EXPECT_FALSE(PhaseWrites(Stream("block", StreamSpec::READ), device));
  // A read of a disposable device lays its data out first.
  EXPECT_TRUE(PhaseWrites(Stream("block", StreamSpec::READ), disposable));
  EXPECT_TRUE(PhaseWrites(Command("dir", false), dir));
  PhaseSpec randread;
  randread.mutable_randio()->set_rw(stormark::v1::RandioSpec::RANDREAD);
  EXPECT_FALSE(PhaseWrites(randread, device));
  randread.mutable_randio()->set_verify(true);
  EXPECT_TRUE(PhaseWrites(randread, device));
  PhaseSpec bonnie;
  bonnie.mutable_bonnie();
  EXPECT_TRUE(PhaseWrites(bonnie, dir));
}

TEST_F(AuthzTest, BadRulesNameTheirLine) {
  struct Case {
    std::string yaml;
    int line;
    std::string what;
  };
  for (const Case& c : std::vector<Case>{
           {"identities: {cn: x}\n", 5, "'identities' must be a non-empty list"},
           {"identities: []\n", 5, "'identities' must be a non-empty list"},
           {"identities:\n  - targets: [scratch]\n", 6, "identities entry without 'match'"},
           {"identities:\n  - match: {}\n", 6, "'match' must be a map"},
           {"identities:\n  - match: {uid: 0}\n", 6, "unknown field 'match.uid'"},
           {"identities:\n  - match: {cn: x}\n    root: true\n", 7,
            "unknown field 'root' in an identities entry"},
           {"identities:\n  - match: {cn: x}\n    write: maybe\n", 7, "write"},
           {"identities:\n  - match: {cn: x}\n    targets: scratch\n", 7,
            "'targets' must be a non-empty list"},
           {"identities:\n  - match: {cn: x}\n    targets: [nvme]\n", 6,
            "identities: no target 'nvme' (configured: scratch, disk1, spare)"},
       }) {
    common::StatusOr<AgentConfig> config = Parse(c.yaml);
    ASSERT_FALSE(config.ok()) << c.yaml;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(config.status().message()),
                StartsWith(common::StrCat("agent.yaml:", c.line, ": ")))
        << c.yaml;
    EXPECT_THAT(config.status().message(), HasSubstr(c.what)) << c.yaml;
  }
}

}  // namespace
}  // namespace stormark::agent
