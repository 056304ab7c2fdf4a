#include "agent/config/config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class ParseAgentConfigTest : public TempDirTest {
 protected:
  // Parses `yaml` as "agent.yaml", with every "$DIR" replaced by the scratch directory.
  common::StatusOr<AgentConfig> Parse(std::string yaml) {
    for (size_t at = yaml.find("$DIR"); at != std::string::npos; at = yaml.find("$DIR")) {
      yaml.replace(at, 4, dir());
    }
    return ParseAgentConfig(yaml, "agent.yaml");
  }

  // Expects an INVALID_ARGUMENT whose message starts "agent.yaml:<line>: " and contains `what`.
  void ExpectErrorAt(const std::string& yaml, int line, const std::string& what) {
    common::StatusOr<AgentConfig> config = Parse(yaml);
    ASSERT_FALSE(config.ok()) << yaml;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(config.status().message()),
                StartsWith(common::StrCat("agent.yaml:", line, ": ")))
        << yaml;
    EXPECT_THAT(config.status().message(), HasSubstr(what)) << yaml;
  }
};

TEST_F(ParseAgentConfigTest, ParsesTargets) {
  ASSERT_EQ(mkdir((dir() + "/fast").c_str(), 0700), 0);
  common::StatusOr<AgentConfig> config = Parse(
      "# comment\n"
      "targets:\n"
      "  scratch:\n"
      "    dir: $DIR\n"
      "  fast:\n"
      "    dir: $DIR/fast\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->targets.size(), 2u);
  EXPECT_EQ(config->targets[0].name, "scratch");
  EXPECT_EQ(config->targets[0].kind, "dir");
  EXPECT_EQ(config->targets[0].path, dir());
  EXPECT_EQ(config->targets[1].name, "fast");
  EXPECT_EQ(config->targets[1].path, dir() + "/fast");

  ASSERT_NE(config->FindTarget("fast"), nullptr);
  EXPECT_EQ(config->FindTarget("fast")->path, dir() + "/fast");
  EXPECT_EQ(config->FindTarget("slow"), nullptr);
  EXPECT_EQ(config->TargetNames(), "scratch, fast");
}

TEST_F(ParseAgentConfigTest, CommandsAndCacheDropAreOffAndOnByDefault) {
  auto config = Parse("targets: {scratch: {dir: $DIR}}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->commands.enabled);
  EXPECT_TRUE(config->commands.user.empty());  // nobody, on a root agent
  EXPECT_TRUE(config->allow_drop_caches);
  stormark::v1::CommandSpec spec;
  spec.add_argv("/bin/true");
  EXPECT_EQ(config->commands.Approve(spec).status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(ParseAgentConfigTest, ParsesTheCommandPolicy) {
  auto config = Parse(
      "targets: {scratch: {dir: $DIR}}\n"
      "commands:\n"
      "  enabled: true\n"
      "  allow:\n"
      "    - [true]\n"
      "    - [/bin/sh, -c, \"sync\"]\n"
      "    - [tar, -xf, \"*.tar\", \"**\"]\n"
      "allow_drop_caches: false\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->commands.enabled);
  EXPECT_FALSE(config->allow_drop_caches);
  ASSERT_EQ(config->commands.allow.size(), 3u);
  // Programs are resolved to real paths when the config is read.
  EXPECT_EQ(config->commands.allow[0].program.front(), '/');
  EXPECT_EQ(config->commands.allow[2].patterns,
            (std::vector<std::string>{"tar", "-xf", "*.tar", "**"}));
  stormark::v1::CommandSpec spec;
  spec.add_argv("true");
  EXPECT_TRUE(config->commands.Approve(spec).ok());
  spec.set_argv(0, "/usr/bin/rm");
  const common::Status refused = config->commands.Approve(spec).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("commands.allow"));
}

TEST_F(ParseAgentConfigTest, ParsesTheCommandUser) {
  if (geteuid() != 0) GTEST_SKIP() << "a user other than the agent's own needs a root agent";
  auto config = Parse("targets: {scratch: {dir: $DIR}}\ncommands: {enabled: true, user: root}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->commands.user, "root");
  ExpectErrorAt(
      "targets: {scratch: {dir: $DIR}}\ncommands:\n  enabled: true\n  user: no-such-user-xyz\n", 4,
      "commands.user 'no-such-user-xyz'");
}

TEST_F(ParseAgentConfigTest, ABareProgramNameIsRefusedWithTheNewSyntax) {
  ExpectErrorAt("targets: {scratch: {dir: $DIR}}\ncommands:\n  enabled: true\n  allow: [tar]\n", 4,
                "'tar' is a bare program name; a rule is now a list that pins the whole argument "
                "vector, such as [tar, -xf, \"*.tar\"]");
  ExpectErrorAt("targets: {scratch: {dir: $DIR}}\ncommands:\n  allow:\n    - [true, \"**\", x]\n",
                4, "last element");
  ExpectErrorAt("targets: {scratch: {dir: $DIR}}\ncommands:\n  allow:\n    - [true, [x]]\n", 4,
                "each element of a rule is a string");
}

TEST_F(ParseAgentConfigTest, BadCommandPolicyNamesLineAndField) {
  ExpectErrorAt("targets: {scratch: {dir: $DIR}}\ncommands: {enabled: maybe}\n", 2,
                "commands.enabled");
  ExpectErrorAt("targets: {scratch: {dir: $DIR}}\ncommands:\n  allow: [[no-such-program-xyz]]\n", 3,
                "no-such-program-xyz");
  ExpectErrorAt("targets: {scratch: {dir: $DIR}}\ncommands:\n  run: yes\n", 3, "commands.run");
  ExpectErrorAt("targets: {scratch: {dir: $DIR}}\ncommands:\n  user: \"\"\n", 3, "commands.user");
  ExpectErrorAt("targets: {scratch: {dir: $DIR}}\nallow_drop_caches: sometimes\n", 2,
                "allow_drop_caches");
}

TEST_F(ParseAgentConfigTest, ParsesBlockAndNullTargets) {
  std::ofstream(dir() + "/disk.img") << std::string(8192, 'x');
  common::StatusOr<AgentConfig> config = Parse(
      "targets:\n"
      "  img: {block: $DIR/disk.img, disposable: true}\n"
      "  fresh: {block: $DIR/new.img, size: 1G}\n"
      "  ceiling: {null: true}\n"
      "  small: {null: true, size: 4G}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->targets.size(), 4u);
  EXPECT_EQ(config->targets[0].kind, "block");
  EXPECT_EQ(config->targets[0].path, dir() + "/disk.img");
  EXPECT_TRUE(config->targets[0].disposable);
  EXPECT_EQ(config->targets[0].size, 0u);
  EXPECT_EQ(config->targets[1].size, uint64_t{1} << 30);
  EXPECT_FALSE(config->targets[1].disposable);
  EXPECT_EQ(config->targets[2].kind, "null");
  EXPECT_EQ(config->targets[2].size, kDefaultNullSize);
  EXPECT_EQ(config->targets[3].size, uint64_t{4} << 30);
}

TEST_F(ParseAgentConfigTest, MissingBlockFileNeedsASize) {
  ExpectErrorAt(
      "targets:\n"
      "  img:\n"
      "    block: $DIR/new.img\n",
      3, "does not exist; give 'size' to have the agent create it");
}

TEST_F(ParseAgentConfigTest, BlockPathMustBeAFileOrADevice) {
  ExpectErrorAt(
      "targets:\n"
      "  img:\n"
      "    block: $DIR\n",
      3, "is neither a block device nor a regular file");
  ExpectErrorAt(
      "targets:\n"
      "  img:\n"
      "    block: /nonexistent-dir/x.img\n"
      "    size: 1G\n",
      3, "does not exist");
}

TEST_F(ParseAgentConfigTest, AoeTargetNamesInterfaceShelfAndSlot) {
  common::StatusOr<AgentConfig> config = Parse(
      "targets:\n"
      "  shelf:\n"
      "    aoe: aoe://eth1/1.0\n"
      "    size: 1G\n"
      "    disposable: true\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->targets[0].kind, "aoe");
  EXPECT_EQ(config->targets[0].path, "aoe://eth1/1.0");
  EXPECT_EQ(config->targets[0].size, uint64_t{1} << 30);
  EXPECT_TRUE(config->targets[0].disposable);
  ExpectErrorAt(
      "targets:\n"
      "  shelf:\n"
      "    aoe: eth1/1.0\n",
      3, "target 'shelf': 'eth1/1.0' is not an AoE address aoe://IFACE/SHELF.SLOT");
}

TEST_F(ParseAgentConfigTest, TargetIsOneKindOnly) {
  ExpectErrorAt(
      "targets:\n"
      "  t:\n"
      "    dir: $DIR\n"
      "    block: $DIR/x\n",
      4, "has both 'dir' and 'block'");
}

TEST_F(ParseAgentConfigTest, SizeAndDisposableDoNotApplyToDirectories) {
  ExpectErrorAt(
      "targets:\n"
      "  t:\n"
      "    dir: $DIR\n"
      "    disposable: true\n",
      4, "'disposable' applies to block, aoe, null, nbd and iscsi targets, not dir");
}

TEST_F(ParseAgentConfigTest, StrictModesCanBeTurnedOffForADirTargetOnly) {
  auto config = Parse(
      "targets:\n"
      "  nfs: {dir: $DIR, strict_modes: false}\n"
      "  local: {dir: $DIR}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->targets[0].strict_modes);
  EXPECT_TRUE(config->targets[1].strict_modes);
  EXPECT_EQ(config->agent_uid, geteuid());
  ExpectErrorAt(
      "targets:\n"
      "  t:\n"
      "    null: true\n"
      "    strict_modes: false\n",
      4, "'strict_modes' applies to dir and block targets, not null");
  ExpectErrorAt(
      "targets:\n"
      "  t:\n"
      "    dir: $DIR\n"
      "    strict_modes: sometimes\n",
      4, "bad strict_modes 'sometimes'");
}

TEST_F(ParseAgentConfigTest, BadSizeAndDisposableNameTheirLine) {
  ExpectErrorAt(
      "targets:\n"
      "  t:\n"
      "    null: true\n"
      "    size: 10X\n",
      4, "bad size '10X'");
  ExpectErrorAt(
      "targets:\n"
      "  t:\n"
      "    block: /dev/null\n"
      "    disposable: perhaps\n",
      4, "bad disposable 'perhaps'");
  ExpectErrorAt(
      "targets:\n"
      "  t:\n"
      "    null: false\n",
      3, "write 'null: true'");
}

TEST_F(ParseAgentConfigTest, FlowStyleIsAccepted) {
  common::StatusOr<AgentConfig> config = Parse("targets: {a: {dir: $DIR}}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->TargetNames(), "a");
}

TEST_F(ParseAgentConfigTest, UnknownTopLevelFieldNamesLine) {
  ExpectErrorAt(
      "targets:\n"
      "  scratch:\n"
      "    dir: $DIR\n"
      "listen: 0.0.0.0\n",
      4, "unknown field 'listen'");
}

TEST_F(ParseAgentConfigTest, UnknownTargetFieldNamesLine) {
  ExpectErrorAt(
      "targets:\n"
      "  scratch:\n"
      "    dir: $DIR\n"
      "    speed: 10G\n",
      4, "target 'scratch': unknown field 'speed'");
}

TEST_F(ParseAgentConfigTest, AnUnknownKindIsOneLineNamingTheLineAndTheKnownKinds) {
  common::StatusOr<AgentConfig> config = Parse(
      "targets:\n"
      "  scratch:\n"
      "    tape: /dev/st0\n");
  ASSERT_FALSE(config.ok());
  const std::string message(config.status().message());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message, StartsWith("agent.yaml:3: target 'scratch': unknown field 'tape' "));
  EXPECT_THAT(message, HasSubstr("one of dir, block, aoe, null, nbd, iscsi"));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST_F(ParseAgentConfigTest, AKeyIsCheckedAgainstTheKindWhereverTheKindComesInTheMap) {
  ExpectErrorAt(
      "targets:\n"
      "  t:\n"
      "    io_timeout: 5s\n"
      "    dir: $DIR\n",
      3, "'io_timeout' applies to aoe, nbd and iscsi targets, not dir");
  auto config = Parse("targets:\n  t: {size: 1M, null: true}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->targets[0].size, uint64_t{1} << 20);
}

TEST_F(ParseAgentConfigTest, MissingDirectoryNamesLineAndPath) {
  ExpectErrorAt(
      "targets:\n"
      "  scratch:\n"
      "    dir: $DIR/nope\n",
      3, common::StrCat("target 'scratch': directory ", dir(), "/nope does not exist"));
}

TEST_F(ParseAgentConfigTest, PathToAFileIsNotADirectory) {
  std::ofstream(dir() + "/file") << "x";
  ExpectErrorAt(
      "targets:\n"
      "  scratch:\n"
      "    dir: $DIR/file\n",
      3, "does not exist");
}

TEST_F(ParseAgentConfigTest, RelativePathIsRejected) {
  ExpectErrorAt(
      "targets:\n"
      "  scratch:\n"
      "    dir: srv/bench\n",
      3, "dir 'srv/bench' must be an absolute path");
}

TEST_F(ParseAgentConfigTest, TargetWithoutDirIsRejected) {
  ExpectErrorAt(
      "targets:\n"
      "  scratch: {}\n",
      2,
      "target 'scratch' needs one of 'dir: PATH', 'block: PATH', "
      "'aoe: aoe://IFACE/SHELF.SLOT', 'null: true', 'nbd: URI' or 'iscsi: URI'");
}

TEST_F(ParseAgentConfigTest, TargetThatIsNotAMapIsRejected) {
  ExpectErrorAt(
      "targets:\n"
      "  scratch: $DIR\n",
      2, "must be a map");
}

TEST_F(ParseAgentConfigTest, DirThatIsNotAScalarIsRejected) {
  ExpectErrorAt(
      "targets:\n"
      "  scratch:\n"
      "    dir: [a, b]\n",
      3, "'dir' must be one value, as in 'dir: PATH'");
}

TEST_F(ParseAgentConfigTest, BadTargetNamesAreRejected) {
  for (const char* name : {"has space", "slash/name", "..", "dollar$", "ü"}) {
    ExpectErrorAt(common::StrCat("targets:\n  \"", name, "\":\n    dir: $DIR\n"), 2,
                  common::StrCat("target name '", name, "'"));
  }
  ExpectErrorAt(common::StrCat("targets:\n  ", std::string(65, 'a'), ":\n    dir: $DIR\n"), 2,
                "1-64 characters");
}

TEST_F(ParseAgentConfigTest, DuplicateNamesAreRejected) {
  ExpectErrorAt(
      "targets:\n"
      "  scratch:\n"
      "    dir: $DIR\n"
      "  scratch:\n"
      "    dir: $DIR\n",
      4, "target 'scratch' is defined twice");
}

TEST_F(ParseAgentConfigTest, EmptyOrMissingTargetsAreRejected) {
  for (const char* yaml : {"", "# nothing\n", "targets:\n", "targets: {}\n", "targets: [a]\n",
                           "other: 1\n", "- a\n"}) {
    common::StatusOr<AgentConfig> config = Parse(yaml);
    ASSERT_FALSE(config.ok()) << "'" << yaml << "'";
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(config.status().message()), StartsWith("agent.yaml")) << yaml;
  }
}

TEST_F(ParseAgentConfigTest, MalformedYamlIsAnErrorWithALine) {
  ExpectErrorAt(
      "targets:\n"
      "  scratch:\n"
      "    dir: [unclosed\n",
      4, "");
  common::StatusOr<AgentConfig> config = Parse("targets: {a: {dir: \"x}}\n");
  EXPECT_FALSE(config.ok());
}

TEST(IsValidName, AcceptsOnlyTheWireAlphabet) {
  EXPECT_TRUE(IsValidName("scratch"));
  EXPECT_TRUE(IsValidName("Fast_1.ssd-2"));
  EXPECT_TRUE(IsValidName("a"));
  EXPECT_TRUE(IsValidName(std::string(64, 'x')));
  EXPECT_TRUE(IsValidName("..."));
  EXPECT_FALSE(IsValidName(""));
  EXPECT_FALSE(IsValidName("."));
  EXPECT_FALSE(IsValidName(".."));
  EXPECT_FALSE(IsValidName(std::string(65, 'x')));
  EXPECT_FALSE(IsValidName("a/b"));
  EXPECT_FALSE(IsValidName("a b"));
  EXPECT_FALSE(IsValidName(std::string("a\0b", 3)));
}

TEST(AgentConfig, TargetNamesOfEmptyConfig) { EXPECT_EQ(AgentConfig().TargetNames(), "(none)"); }

class LoadAgentConfigTest : public TempDirTest {};

TEST_F(LoadAgentConfigTest, ErrorsNameTheFile) {
  const std::string path = dir() + "/agent.yaml";
  std::ofstream(path) << "targets:\n  scratch:\n    dir: relative\n";
  common::StatusOr<AgentConfig> config = LoadAgentConfig(path);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), StartsWith(path + ":3: "));
}

TEST_F(LoadAgentConfigTest, ReadsAFile) {
  const std::string path = dir() + "/agent.yaml";
  std::ofstream(path) << "targets:\n  scratch:\n    dir: " << dir() << "\n";
  common::StatusOr<AgentConfig> config = LoadAgentConfig(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->TargetNames(), "scratch");
}

TEST_F(LoadAgentConfigTest, MissingFileIsNotFound) {
  common::StatusOr<AgentConfig> config = LoadAgentConfig(dir() + "/absent.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(config.status().message(), HasSubstr("absent.yaml"));
}

TEST_F(ParseAgentConfigTest, NetworkTargetsTakeTheirUriTlsAndChap) {
  std::ofstream(dir() + "/keys.psk") << "stormark:00ff\n";
  std::ofstream(dir() + "/chap.secret") << "secret\n";
  auto config = Parse(
      "targets:\n"
      "  tcp: {nbd: 'nbd://127.0.0.1:10809/x', disposable: true, size: 1G}\n"
      "  sock: {nbd: 'nbd+unix:///x?socket=/run/nbd.sock'}\n"
      "  tls:\n"
      "    nbd: nbds://[::1]/y\n"
      "    tls: {psk_file: $DIR/keys.psk, username: bench}\n"
      "  certs: {nbd: 'nbds://h/', tls: {certificates: $DIR}}\n"
      "  lun:\n"
      "    iscsi: iscsi://10.1.2.3/iqn.2003-01.org.x:disk/1\n"
      "    chap: {user: u, password_file: $DIR/chap.secret, initiator: iqn.2024-01.org.y:z}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  const TargetConfig* tcp = config->FindTarget("tcp");
  EXPECT_EQ(tcp->kind, "nbd");
  EXPECT_EQ(tcp->path, "nbd://127.0.0.1:10809/x");
  EXPECT_TRUE(tcp->disposable);
  EXPECT_EQ(tcp->size, uint64_t{1} << 30);
  EXPECT_NE(tcp->cache, nullptr);
  EXPECT_EQ(config->FindTarget("tls")->tls.psk_file, dir() + "/keys.psk");
  EXPECT_EQ(config->FindTarget("tls")->tls.username, "bench");
  EXPECT_EQ(config->FindTarget("certs")->tls.certificates, dir());
  const TargetConfig* lun = config->FindTarget("lun");
  EXPECT_EQ(lun->kind, "iscsi");
  EXPECT_EQ(lun->chap.user, "u");
  EXPECT_EQ(lun->chap.password_file, dir() + "/chap.secret");
  EXPECT_EQ(lun->chap.initiator, "iqn.2024-01.org.y:z");
}

TEST_F(ParseAgentConfigTest, NetworkTargetErrorsNameTheirLine) {
  ExpectErrorAt("targets:\n  t:\n    nbd: http://x/\n", 3, "scheme 'http'");
  ExpectErrorAt("targets:\n  t:\n    nbd: nbd://user:pw@x/\n", 3,
                "credentials do not belong in the URI");
  ExpectErrorAt("targets:\n  t:\n    iscsi: iscsi://x/iqn.a:b\n", 3,
                "needs both the target's IQN and a LUN");
  ExpectErrorAt("targets:\n  t:\n    nbd: nbd://x/\n    tls: {certificates: $DIR}\n", 3,
                "write nbds://");
  ExpectErrorAt("targets:\n  t:\n    nbd: nbds://x/\n    tls: {certificates: /nope}\n", 4,
                "tls.certificates /nope is not an existing directory");
  ExpectErrorAt("targets:\n  t:\n    nbd: nbds://x/\n    tls: {username: u}\n", 4,
                "exactly one of 'certificates: DIR' or 'psk_file: FILE'");
  ExpectErrorAt("targets:\n  t:\n    nbd: nbds://x/\n    tls: {pin: 1}\n", 4,
                "unknown field 'tls.pin'");
  ExpectErrorAt("targets:\n  t:\n    iscsi: iscsi://x/iqn.a:b/0\n    chap: {user: u}\n", 4,
                "needs both 'user' and one of 'password' or 'password_file'");
  ExpectErrorAt(
      "targets:\n  t:\n    iscsi: iscsi://x/iqn.a:b/0\n"
      "    chap: {user: u, password: p, initiator: bob}\n",
      4, "chap.initiator 'bob' is not an iSCSI name");
  ExpectErrorAt("targets:\n  t:\n    nbd: nbd://x/\n    chap: {user: u, password: p}\n", 4,
                "'chap' applies to iscsi targets, not nbd");
  ExpectErrorAt("targets:\n  t:\n    block: $DIR/f\n    size: 1M\n    tls: {certificates: $DIR}\n",
                5, "'tls' applies to nbd targets, not block");
}

TEST_F(ParseAgentConfigTest, NetworkTimeoutsAreSetPerTarget) {
  auto config = Parse(
      "targets:\n"
      "  shelf: {aoe: aoe://eth1/1.0, io_timeout: 3s, connect_timeout: 500ms}\n"
      "  lun: {iscsi: iscsi://x/iqn.a:b/0, io_timeout: 2m}\n"
      "  nbd: {nbd: nbd://x/e}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->FindTarget("shelf")->io_timeout_nanos, 3'000'000'000);
  EXPECT_EQ(config->FindTarget("shelf")->connect_timeout_nanos, 500'000'000);
  EXPECT_EQ(config->FindTarget("lun")->io_timeout_nanos, int64_t{120} * 1'000'000'000);
  EXPECT_EQ(config->FindTarget("lun")->connect_timeout_nanos, 0);  // the default
  EXPECT_EQ(config->FindTarget("nbd")->io_timeout_nanos, 0);
}

TEST_F(ParseAgentConfigTest, BadNetworkTimeoutsNameTheirLine) {
  ExpectErrorAt("targets:\n  t:\n    nbd: nbd://x/\n    io_timeout: soon\n", 4, "io_timeout");
  ExpectErrorAt("targets:\n  t:\n    nbd: nbd://x/\n    io_timeout: 1ms\n", 4,
                "'io_timeout' must be between 100ms and 1h");
  ExpectErrorAt("targets:\n  t:\n    nbd: nbd://x/\n    connect_timeout: 2h\n", 4,
                "'connect_timeout' must be between 100ms and 1h");
  ExpectErrorAt("targets:\n  t:\n    dir: $DIR\n    io_timeout: 5s\n", 4,
                "'io_timeout' applies to aoe, nbd and iscsi targets, not dir");
}

TEST_F(ParseAgentConfigTest, ADirTargetMayNameItsDeviceAndNothingElse) {
  auto config = Parse("targets:\n  t:\n    dir: $DIR\n    device: /dev/md0\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->FindTarget("t")->device, "/dev/md0");
  ExpectErrorAt("targets:\n  t:\n    dir: $DIR\n    device: /etc/passwd\n", 4,
                "device '/etc/passwd' must name a block device, such as /dev/sdb");
  ExpectErrorAt("targets:\n  t:\n    dir: $DIR\n    device: /dev/../etc/shadow\n", 4,
                "must name a block device");
  ExpectErrorAt("targets:\n  t:\n    nbd: nbd://x/e\n    device: /dev/sdb\n", 4,
                "'device' applies to");
}

}  // namespace
}  // namespace stormark::agent
