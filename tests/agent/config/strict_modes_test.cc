#include "agent/config/strict_modes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr uid_t kNobody = 65534;

// The test's directory sits in /var/tmp (root, 1777), so it passes for the user running the
// test; each case spoils one component.
class StrictModesTest : public TempDirTest {
 protected:
  std::string Path(const std::string& name) const { return common::StrCat(dir(), "/", name); }

  void MakeDir(const std::string& name, mode_t mode) {
    const std::string path = Path(name);
    ASSERT_EQ(mkdir(path.c_str(), 0700), 0) << path;
    // chmod, since mkdir's mode passes through the umask and drops the sticky bit.
    ASSERT_EQ(chmod(path.c_str(), mode), 0) << path;
  }

  void MakeFile(const std::string& name, mode_t mode) {
    const std::string path = Path(name);
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << path;
    close(fd);
    ASSERT_EQ(chmod(path.c_str(), mode), 0) << path;
  }

  void MakeLink(const std::string& name, const std::string& to) {
    ASSERT_EQ(symlink(to.c_str(), Path(name).c_str()), 0) << name;
  }

  common::Status CheckDir(const std::string& name) const {
    return CheckTrustedPath(Path(name), TrustedKind::kDirectory, me_);
  }
  common::Status CheckFile(const std::string& name) const {
    return CheckTrustedPath(Path(name), TrustedKind::kFile, me_);
  }

  const uid_t me_ = geteuid();
};

#define SKIP_UNLESS_ROOT()                                                     \
  do {                                                                         \
    if (geteuid() != 0) GTEST_SKIP() << "needs root to chown to another user"; \
  } while (0)

TEST_F(StrictModesTest, OwnDirectoryUnderStickyVarTmpPasses) {
  EXPECT_TRUE(CheckTrustedPath(dir(), TrustedKind::kDirectory, me_).ok());
  MakeDir("t", 0755);
  EXPECT_TRUE(CheckDir("t").ok());
}

TEST_F(StrictModesTest, ReturnsADescriptorOfTheCheckedDirectory) {
  MakeDir("t", 0700);
  auto fd = OpenTrustedPath(Path("t"), TrustedKind::kDirectory, me_);
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat by_fd, by_path;
  ASSERT_EQ(fstat(fd->get(), &by_fd), 0);
  ASSERT_EQ(stat(Path("t").c_str(), &by_path), 0);
  EXPECT_EQ(by_fd.st_ino, by_path.st_ino);
  EXPECT_EQ(by_fd.st_dev, by_path.st_dev);
}

TEST_F(StrictModesTest, GroupWritableTargetIsRefusedWithChmodFix) {
  MakeDir("t", 0770);
  const common::Status s = CheckDir("t");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), StartsWith(Path("t") + " is owned by "));
  EXPECT_THAT(std::string(s.message()), HasSubstr("mode 0770: it must be owned by root or by the "
                                                  "agent's user"));
  EXPECT_THAT(std::string(s.message()), EndsWith("; fix: chmod go-w " + Path("t")));
}

TEST_F(StrictModesTest, WorldWritableTargetIsRefused) {
  MakeDir("t", 0777);
  EXPECT_THAT(std::string(CheckDir("t").message()), HasSubstr("mode 0777"));
}

TEST_F(StrictModesTest, StickyWorldWritableParentAcceptsATrustedChild) {
  MakeDir("pub", 01777);
  MakeDir("pub/t", 0755);
  EXPECT_TRUE(CheckDir("pub/t").ok()) << CheckDir("pub/t");
}

TEST_F(StrictModesTest, StickyGroupWritableParentIsAcceptedToo) {
  MakeDir("shared", 01770);
  MakeDir("shared/t", 0700);
  EXPECT_TRUE(CheckDir("shared/t").ok());
}

TEST_F(StrictModesTest, WorldWritableParentWithoutStickyBitIsRefused) {
  MakeDir("pub", 0777);
  MakeDir("pub/t", 0755);
  const common::Status s = CheckDir("pub/t");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), StartsWith(Path("pub") + " is owned by "));
  EXPECT_THAT(std::string(s.message()), HasSubstr("mode 0777"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("(unless sticky, as /tmp is)"));
  EXPECT_THAT(std::string(s.message()), EndsWith("fix: chmod go-w " + Path("pub")));
}

TEST_F(StrictModesTest, GroupWritableParentWithoutStickyBitIsRefused) {
  MakeDir("grp", 0775);
  MakeDir("grp/t", 0755);
  EXPECT_THAT(std::string(CheckDir("grp/t").message()), StartsWith(Path("grp") + " is owned by "));
}

TEST_F(StrictModesTest, StickyWorldWritableTargetItselfIsRefusedWithADirectoryOfItsOwn) {
  MakeDir("pub", 01777);
  const common::Status s = CheckDir("pub");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), HasSubstr("mode 1777"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("give the target a directory of its own below it "
                                                  "(install -d -o "));
  EXPECT_THAT(std::string(s.message()), HasSubstr(" -m 0755 " + Path("pub") + "/stormark)"));
}

TEST_F(StrictModesTest, ChildOwnedByNobodyInStickyDirectoryIsRefusedNamingOwnerModeAndFix) {
  SKIP_UNLESS_ROOT();
  MakeDir("pub", 01777);
  MakeDir("pub/stormark", 0777);
  ASSERT_EQ(chown(Path("pub/stormark").c_str(), kNobody, kNobody), 0);
  const std::string p = Path("pub/stormark");
  const common::Status s = CheckTrustedPath(p, TrustedKind::kDirectory, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), common::StrCat(p, " is owned by ", DescribeUser(kNobody),
                                        ", mode 0777: it must be owned by root or by the agent's "
                                        "user (root) and not writable by group or others; fix: "
                                        "chown root ",
                                        p, " && chmod go-w ", p));
}

TEST_F(StrictModesTest, OwnerAloneWrongAsksOnlyForChown) {
  SKIP_UNLESS_ROOT();
  MakeDir("t", 0755);
  ASSERT_EQ(chown(Path("t").c_str(), kNobody, kNobody), 0);
  const common::Status s = CheckTrustedPath(Path("t"), TrustedKind::kDirectory, 0);
  EXPECT_THAT(std::string(s.message()), HasSubstr("is owned by " + DescribeUser(kNobody)));
  EXPECT_THAT(std::string(s.message()), EndsWith("; fix: chown root " + Path("t")));
}

TEST_F(StrictModesTest, AncestorOwnedByAnotherUserIsRefused) {
  SKIP_UNLESS_ROOT();
  MakeDir("home", 0755);
  MakeDir("home/t", 0755);
  ASSERT_EQ(chown(Path("home").c_str(), kNobody, kNobody), 0);
  EXPECT_THAT(std::string(CheckTrustedPath(Path("home/t"), TrustedKind::kDirectory, 0).message()),
              StartsWith(Path("home") + " is owned by " + DescribeUser(kNobody)));
}

TEST_F(StrictModesTest, TheAgentsOwnUserIsTrusted) {
  SKIP_UNLESS_ROOT();
  ASSERT_EQ(chown(dir().c_str(), kNobody, kNobody), 0);
  MakeDir("t", 0700);
  ASSERT_EQ(chown(Path("t").c_str(), kNobody, kNobody), 0);
  EXPECT_TRUE(CheckTrustedPath(Path("t"), TrustedKind::kDirectory, kNobody).ok());
  // Root's directories stay trusted for any agent; another user's do not.
  EXPECT_FALSE(CheckTrustedPath(Path("t"), TrustedKind::kDirectory, 4242).ok());
  ASSERT_EQ(chmod(Path("t").c_str(), 0770), 0);
  EXPECT_THAT(std::string(CheckTrustedPath(Path("t"), TrustedKind::kDirectory, kNobody).message()),
              HasSubstr("by the agent's user (nobody)"));
}

TEST_F(StrictModesTest, TargetThatIsASymlinkIsRefused) {
  MakeDir("real", 0755);
  MakeLink("link", Path("real"));
  const common::Status s = CheckDir("link");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), Path("link") +
                             " is a symbolic link; the agent does not follow one to a "
                             "target (configure " +
                             Path("real") + " instead)");
}

TEST_F(StrictModesTest, TrustedSymlinkOnTheWayIsFollowedAndItsDestinationWalked) {
  MakeDir("real", 0755);
  MakeDir("real/t", 0700);
  MakeLink("link", "real");  // Relative: resolved from the link's directory.
  auto fd = OpenTrustedPath(Path("link/t"), TrustedKind::kDirectory, me_);
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat by_fd, real;
  ASSERT_EQ(fstat(fd->get(), &by_fd), 0);
  ASSERT_EQ(stat(Path("real/t").c_str(), &real), 0);
  EXPECT_EQ(by_fd.st_ino, real.st_ino);
}

TEST_F(StrictModesTest, SymlinkLeadingThroughAnUntrustedDirectoryIsRefusedNamingIt) {
  MakeDir("pub", 0777);
  MakeDir("pub/t", 0755);
  MakeDir("ok", 0755);
  MakeLink("ok/via", "../pub");
  EXPECT_THAT(std::string(CheckDir("ok/via/t").message()),
              StartsWith(Path("pub") + " is owned by "));
}

TEST_F(StrictModesTest, AbsoluteSymlinkRestartsFromRoot) {
  MakeDir("t", 0700);
  MakeDir("a", 0755);
  MakeLink("a/abs", Path("t"));
  EXPECT_TRUE(CheckTrustedPath(Path("a/abs/."), TrustedKind::kDirectory, me_).ok());
}

TEST_F(StrictModesTest, SymlinkOwnedByAnotherUserIsRefused) {
  SKIP_UNLESS_ROOT();
  MakeDir("pub", 01777);
  MakeDir("pub/real", 0755);
  MakeDir("pub/real/t", 0755);
  MakeLink("pub/swapped", "real");
  ASSERT_EQ(lchown(Path("pub/swapped").c_str(), kNobody, kNobody), 0);
  const common::Status s = CheckTrustedPath(Path("pub/swapped/t"), TrustedKind::kDirectory, 0);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(
      std::string(s.message()),
      StartsWith(Path("pub/swapped") + " is a symbolic link owned by " + DescribeUser(kNobody)));
  EXPECT_THAT(std::string(s.message()), HasSubstr("chown -h root " + Path("pub/swapped")));
}

TEST_F(StrictModesTest, SymlinkLoopIsAnError) {
  MakeLink("a", "b");
  MakeLink("b", "a");
  const common::Status s = CheckDir("a/t");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("symbolic links"));
}

TEST_F(StrictModesTest, DotDotClimbsTheWalkedDirectories) {
  MakeDir("a", 0755);
  MakeDir("t", 0700);
  EXPECT_TRUE(CheckTrustedPath(Path("a/../t"), TrustedKind::kDirectory, me_).ok());
  MakeDir("pub", 0777);
  // ".." does not undo the walk through pub: it was judged on the way.
  EXPECT_FALSE(CheckTrustedPath(Path("pub/../t"), TrustedKind::kDirectory, me_).ok());
}

TEST_F(StrictModesTest, FileRules) {
  MakeFile("agent.yaml", 0644);
  EXPECT_TRUE(CheckFile("agent.yaml").ok());
  MakeFile("shared.yaml", 0664);
  const common::Status s = CheckFile("shared.yaml");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()), HasSubstr("mode 0664"));
  EXPECT_THAT(std::string(s.message()), Not(HasSubstr("unless sticky")));
  EXPECT_THAT(std::string(s.message()), EndsWith("fix: chmod go-w " + Path("shared.yaml")));
}

TEST_F(StrictModesTest, FileBehindATrustedLinkIsFollowed) {
  // As Kubernetes mounts a ConfigMap: agent.yaml -> ..data/agent.yaml, ..data -> ..2024_01.
  MakeDir("..2024_01", 0755);
  MakeFile("..2024_01/agent.yaml", 0644);
  MakeLink("..data", "..2024_01");
  MakeLink("agent.yaml", "..data/agent.yaml");
  EXPECT_TRUE(CheckFile("agent.yaml").ok()) << CheckFile("agent.yaml");
  ASSERT_EQ(chmod(Path("..2024_01/agent.yaml").c_str(), 0666), 0);
  EXPECT_THAT(std::string(CheckFile("agent.yaml").message()),
              StartsWith(Path("..2024_01/agent.yaml") + " is owned by "));
}

TEST_F(StrictModesTest, FileOwnedByAnotherUserIsRefused) {
  SKIP_UNLESS_ROOT();
  MakeFile("agent.key", 0600);
  ASSERT_EQ(chown(Path("agent.key").c_str(), kNobody, kNobody), 0);
  EXPECT_THAT(std::string(CheckTrustedPath(Path("agent.key"), TrustedKind::kFile, 0).message()),
              HasSubstr("is owned by " + DescribeUser(kNobody) + ", mode 0600"));
}

TEST_F(StrictModesTest, WrongKindsAndMissingPaths) {
  MakeDir("d", 0755);
  MakeFile("f", 0644);
  EXPECT_EQ(CheckFile("d").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(CheckFile("d").message()), HasSubstr("is not a regular file"));
  EXPECT_EQ(CheckDir("f").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(CheckDir("f/x").message()), EndsWith(Path("f") + " is not a directory"));
  EXPECT_EQ(CheckDir("missing").code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(CheckDir("missing").message()), StartsWith(Path("missing") + ": "));
  EXPECT_EQ(CheckTrustedPath("relative/dir", TrustedKind::kDirectory, me_).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(StrictModesTest, RootDirectoryItselfPasses) {
  EXPECT_TRUE(CheckTrustedPath("/", TrustedKind::kDirectory, me_).ok());
}

TEST(DescribeUser, NamesKnownUsersAndNumbersOthers) {
  EXPECT_EQ(DescribeUser(0), "root (uid 0)");
  EXPECT_EQ(DescribeUser(4'000'000'123u), "uid 4000000123");
}

}  // namespace
}  // namespace stormark::agent
