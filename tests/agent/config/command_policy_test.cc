#include "agent/config/command_policy.h"

#include <string>
#include <vector>

#include "agent/config/executables.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using stormark::v1::CommandSpec;
using ::testing::HasSubstr;
using ::testing::Not;

CommandSpec Exec(const std::vector<std::string>& argv) {
  CommandSpec spec;
  for (const std::string& arg : argv) spec.add_argv(arg);
  return spec;
}

CommandSpec Shell(const std::string& line) {
  CommandSpec spec;
  spec.set_shell(line);
  return spec;
}

CommandPolicy WithRules(const std::vector<std::vector<std::string>>& rules) {
  CommandPolicy policy;
  policy.enabled = true;
  for (const auto& patterns : rules) {
    auto rule = MakeCommandRule(patterns);
    EXPECT_TRUE(rule.ok()) << rule.status();
    if (rule.ok()) policy.allow.push_back(*rule);
  }
  return policy;
}

std::string Refusal(const CommandPolicy& policy, const CommandSpec& spec) {
  auto approved = policy.Approve(spec);
  EXPECT_EQ(approved.status().code(), absl::StatusCode::kPermissionDenied) << approved.status();
  return std::string(approved.status().message());
}

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(ArgumentMatches, StarMatchesAnyStringSlashAndLeadingDotIncluded) {
  EXPECT_TRUE(ArgumentMatches("*.tar", "x.tar"));
  EXPECT_TRUE(ArgumentMatches("*.tar", "/srv/iso/x.tar"));
  EXPECT_TRUE(ArgumentMatches("*.tar", ".hidden.tar"));
  EXPECT_TRUE(ArgumentMatches("*.tar", "--to-command=sh x.tar"));
  EXPECT_FALSE(ArgumentMatches("*.tar", "x.tar.gz"));
  EXPECT_FALSE(ArgumentMatches("-xf", "-xvf"));
  EXPECT_TRUE(ArgumentMatches("", ""));
  EXPECT_FALSE(ArgumentMatches("", "x"));
}

TEST(ArgumentMatches, BracketsRefuseOptionsAndAbsolutePaths) {
  EXPECT_TRUE(ArgumentMatches("[!-/]*.tar", "x.tar"));
  EXPECT_FALSE(ArgumentMatches("[!-/]*.tar", "-x.tar"));
  EXPECT_FALSE(ArgumentMatches("[!-/]*.tar", "/etc/x.tar"));
}

TEST(ArgumentMatches, ExtendedPatternsAndEscapes) {
  EXPECT_TRUE(ArgumentMatches("count=+([0-9])", "count=128"));
  EXPECT_FALSE(ArgumentMatches("count=+([0-9])", "count="));
  EXPECT_FALSE(ArgumentMatches("count=+([0-9])", "count=1;id"));
  EXPECT_TRUE(ArgumentMatches("bs=+([0-9])?([kM])", "bs=64k"));
  EXPECT_FALSE(ArgumentMatches("bs=+([0-9])?([kM])", "bs=64G"));
  EXPECT_TRUE(ArgumentMatches("\\*", "*"));
  EXPECT_FALSE(ArgumentMatches("\\*", "x"));
}

TEST(MakeCommandRule, ResolvesTheProgramAndKnowsItsSpellings) {
  auto rule = MakeCommandRule({"true", "**"});
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->program, *FindExecutable("true"));
  EXPECT_EQ(rule->names.front(), "true");
  EXPECT_THAT(rule->names, ::testing::Contains(rule->program));
  EXPECT_EQ(rule->ToString(), "[true, \"**\"]");
}

TEST(MakeCommandRule, RefusesRulesThatCannotMeanWhatTheySay) {
  EXPECT_THAT(std::string(MakeCommandRule({"true", "**", "x"}).status().message()),
              HasSubstr("last element"));
  EXPECT_FALSE(MakeCommandRule({}).ok());
  EXPECT_FALSE(MakeCommandRule({"**"}).ok());
  EXPECT_THAT(std::string(MakeCommandRule({"no-such-program-xyz"}).status().message()),
              HasSubstr("no-such-program-xyz"));
}

TEST(CommandPolicy, DisabledRefusesEveryRequestWithOneFixedMessage) {
  CommandPolicy policy;
  const std::string a = Refusal(policy, Exec({"/root/.bashrc"}));
  EXPECT_EQ(a, Refusal(policy, Exec({"/root/does-not-exist"})));
  EXPECT_EQ(a, Refusal(policy, Exec({"/proc/1/fd/2"})));
  EXPECT_EQ(a, Refusal(policy, Shell("true")));
  EXPECT_THAT(a, HasSubstr("commands: {enabled: true}"));
}

TEST(CommandPolicy, ARefusalDependsOnlyOnTheRequestsStrings) {
  const CommandPolicy policy = WithRules({{"tar", "-xf", "*.tar"}});
  // Neither file is looked at: the messages differ only where the names do.
  const std::string exists = Refusal(policy, Exec({"/root/.bashrc", "-x"}));
  const std::string missing = Refusal(policy, Exec({"/root/does-not-exist", "-x"}));
  EXPECT_EQ(Replaced(exists, "/root/.bashrc", "NAME"),
            Replaced(missing, "/root/does-not-exist", "NAME"));
  const std::string fd = Refusal(policy, Exec({"/proc/self/fd/2"}));
  EXPECT_THAT(fd, HasSubstr("argv[0] /proc/self/fd/2 is no program"));
  EXPECT_THAT(fd, Not(HasSubstr("pts")));
  EXPECT_THAT(fd, Not(HasSubstr(".log")));
}

TEST(CommandPolicy, ATarPatternPinsTheArgumentsAndRefusesItsEscapes) {
  const CommandPolicy policy = WithRules({{"tar", "-xf", "*.tar"}});
  auto ok = policy.Approve(Exec({"tar", "-xf", "x.tar"}));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->program, *FindExecutable("tar"));
  EXPECT_EQ(ok->argv, (std::vector<std::string>{"tar", "-xf", "x.tar"}));
  // The path PATH finds, and the real path, name the same rule.
  std::string found;
  const std::string real = *FindExecutable("tar", &found);
  EXPECT_TRUE(policy.Approve(Exec({found, "-xf", "x.tar"})).ok());
  EXPECT_TRUE(policy.Approve(Exec({real, "-xf", "x.tar"})).ok());

  EXPECT_EQ(Refusal(policy, Exec({"tar", "-xf", "x.tar", "--checkpoint=1",
                                  "--checkpoint-action=exec=touch /victim"})),
            "this agent's 'commands.allow' refuses it: argv[3] --checkpoint=1 is more than rule "
            "[tar, -xf, \"*.tar\"] takes (2 arguments) (rules: [tar, -xf, \"*.tar\"])");
  EXPECT_EQ(Refusal(policy, Exec({"tar", "-I", "sh -c 'touch /victim'", "-xf", "x.tar"})),
            "this agent's 'commands.allow' refuses it: argv[1] -I does not match -xf in rule "
            "[tar, -xf, \"*.tar\"] (rules: [tar, -xf, \"*.tar\"])");
  EXPECT_THAT(Refusal(policy, Exec({"tar", "-xf"})), HasSubstr("argv[2] is missing"));
  EXPECT_THAT(Refusal(policy, Exec({"rm", "-rf", "/"})),
              HasSubstr("argv[0] rm is no program in this agent's 'commands.allow' (rules: "
                        "[tar, -xf, \"*.tar\"])"));
  // A program of the same name elsewhere is another program.
  EXPECT_THAT(Refusal(policy, Exec({"./tar", "-xf", "x.tar"})), HasSubstr("argv[0] ./tar"));
}

TEST(CommandPolicy, TheNearestRuleExplainsARefusal) {
  const CommandPolicy policy =
      WithRules({{"tar", "-cf", "*.tar", "."}, {"tar", "-xf", "*.tar"}, {"true"}});
  EXPECT_THAT(Refusal(policy, Exec({"tar", "-xf", "x.zip"})),
              HasSubstr("argv[2] x.zip does not match \"*.tar\" in rule [tar, -xf, \"*.tar\"] "
                        "(rules: [tar, -cf, \"*.tar\", .]; [tar, -xf, \"*.tar\"]; [true])"));
  EXPECT_THAT(Refusal(policy, Exec({"true", "x"})),
              HasSubstr("more than rule [true] takes (0 arguments)"));
  EXPECT_TRUE(policy.Approve(Exec({"true"})).ok());
}

TEST(CommandPolicy, DoubleStarTakesAnyFurtherArguments) {
  const CommandPolicy policy = WithRules({{"true", "-a", "**"}});
  EXPECT_TRUE(policy.Approve(Exec({"true", "-a"})).ok());
  EXPECT_TRUE(policy.Approve(Exec({"true", "-a", "b", "--c=d"})).ok());
  EXPECT_THAT(Refusal(policy, Exec({"true"})), HasSubstr("1 argument or more"));
}

TEST(CommandPolicy, AShellLineIsShDashCLine) {
  const CommandPolicy policy =
      WithRules({{"sh", "-c", "sync"}, {"/bin/sh", "-c", "umount /mnt/+([0-9])"}});
  auto ok = policy.Approve(Shell("sync"));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->argv, (std::vector<std::string>{"sh", "-c", "sync"}));
  EXPECT_TRUE(policy.Approve(Shell("umount /mnt/7")).ok());
  const std::string refused = Refusal(policy, Shell("sync; touch /victim"));
  EXPECT_THAT(refused, HasSubstr("a shell command line runs as [sh, -c, LINE]: "));
  EXPECT_THAT(refused, HasSubstr("argv[2] \"sync; touch /victim\" does not match sync"));
  EXPECT_THAT(Refusal(WithRules({{"true"}}), Shell("true")), HasSubstr("argv[0] sh is no program"));
}

TEST(CommandPolicy, RefusalsQuoteAndCutWhatTheyRepeat) {
  const CommandPolicy policy = WithRules({{"true"}});
  const std::string refused = Refusal(policy, Exec({"true", "a\"b\n" + std::string(300, 'x')}));
  EXPECT_THAT(refused, HasSubstr("argv[1] \"a\\\"b\\x0axxx"));
  EXPECT_THAT(refused, HasSubstr("x\"... is more"));
  EXPECT_LT(refused.size(), 300u);
}

TEST(CommandPolicy, WithoutAnAllowListAnyProgramIsApprovedUnresolved) {
  CommandPolicy policy;
  policy.enabled = true;
  auto approved = policy.Approve(Exec({"no-such-program-xyz", "a"}));
  ASSERT_TRUE(approved.ok()) << approved.status();
  // Looked up later, by the child, as the command user.
  EXPECT_EQ(approved->program, "no-such-program-xyz");
  approved = policy.Approve(Shell("echo hi"));
  ASSERT_TRUE(approved.ok());
  EXPECT_EQ(approved->program, "/bin/sh");
  EXPECT_EQ(approved->argv, (std::vector<std::string>{"sh", "-c", "echo hi"}));
}

}  // namespace
}  // namespace stormark::agent
