#include "agent/dir/os_dir.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every test runs with openat2 and with the per-component walk of kernels without it.
class OsDirTest : public TempDirTest, public ::testing::WithParamInterface<Resolver> {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    target_ = dir() + "/target";
    victim_ = dir() + "/victim";
    ASSERT_EQ(mkdir(target_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir(victim_.c_str(), 0700), 0);
    std::ofstream(victim_ + "/precious") << "keep me";
  }

  std::unique_ptr<OsDir> MustCreate(const std::string& phase_id) {
    Fd fd(open(target_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    EXPECT_GE(fd.get(), 0);
    auto made = OsDir::Create("scratch", target_, std::move(fd), phase_id, GetParam());
    EXPECT_TRUE(made.ok()) << made.status();
    return made.ok() ? std::move(*made) : nullptr;
  }

  static void Touch(Dir& d, const std::string& name) {
    auto file = d.CreateFile(name, O_WRONLY);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_EQ((*file)->Write("data", 4), 4);
    ASSERT_EQ((*file)->Close(), 0);
  }

  // The victim is byte for byte as SetUp left it.
  void ExpectVictimUnchanged() const {
    EXPECT_THAT(ListDir(victim_), ElementsAre("precious"));
    EXPECT_EQ(Slurp(victim_ + "/precious"), "keep me");
  }

  std::string target_;
  std::string victim_;
};

TEST_P(OsDirTest, CreateMakesThePhaseDirectory) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->Describe(""), target_ + "/.stormark-p1");
  EXPECT_EQ(d->Describe("f"), target_ + "/.stormark-p1/f");
  EXPECT_EQ(d->target_name(), "scratch");
  struct stat st;
  ASSERT_EQ(stat(d->Describe("").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_P(OsDirTest, CreateRejectsBadPhaseIds) {
  for (const char* id : {"", "..", "a/b", "../escape"}) {
    Fd fd(open(target_.c_str(), O_RDONLY | O_DIRECTORY));
    auto made = OsDir::Create("scratch", target_, std::move(fd), id, GetParam());
    ASSERT_FALSE(made.ok()) << id;
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_THAT(ListDir(target_), IsEmpty());
}

TEST_P(OsDirTest, CreateRefusesALeftOverPhaseDirectory) {
  ASSERT_EQ(mkdir((target_ + "/.stormark-p1").c_str(), 0700), 0);
  std::ofstream(target_ + "/.stormark-p1/precious") << "keep";
  Fd fd(open(target_.c_str(), O_RDONLY | O_DIRECTORY));
  auto made = OsDir::Create("scratch", target_, std::move(fd), "p1", GetParam());
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(made.status().message(), HasSubstr(".stormark-p1"));
  EXPECT_THAT(ListDir(target_ + "/.stormark-p1"), ElementsAre("precious"));
}

TEST_P(OsDirTest, NamesThatLeaveThePhaseDirectoryAreRefused) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  for (const char* name : {"", "..", "../x", "a/b", "/etc/passwd", "d//f", "./x"}) {
    EXPECT_EQ(d->CreateFile(name, O_WRONLY).status().code(), absl::StatusCode::kInvalidArgument)
        << name;
    EXPECT_EQ(d->CreateDirectory(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_THAT(ListDir(d->Describe("")), IsEmpty());
}

TEST_P(OsDirTest, CreateFileTruncatesItsOwnFile) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "f");
  auto again = d->CreateFile("f", O_WRONLY);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->Size(), 0);
}

TEST_P(OsDirTest, OpenFileOpensOnlyFilesThisPhaseCreated) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "mine");
  std::ofstream(d->Describe("planted")) << "x";
  auto file = d->OpenFile("mine", O_RDONLY);
  ASSERT_TRUE(file.ok()) << file.status();
  char buf[8];
  EXPECT_EQ((*file)->Read(buf, sizeof(buf)), 4);
  EXPECT_EQ(d->OpenFile("planted", O_RDONLY).status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(d->OpenFile("../../etc/passwd", O_RDONLY).ok());
  // And a planted file is never taken over by creating it: O_EXCL.
  EXPECT_FALSE(d->CreateFile("planted", O_WRONLY).ok());
  EXPECT_EQ(Slurp(d->Describe("planted")), "x");
}

TEST_P(OsDirTest, CleanupRemovesExactlyWhatWasCreated) {
  std::ofstream(target_ + "/bystander") << "keep";
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "a");
  Touch(*d, "b");
  Touch(*d, "a");  // Created twice, removed once.
  CleanupReport report = d->Cleanup();
  EXPECT_EQ(report.removed, 3);  // a, b and the phase directory.
  EXPECT_THAT(report.left, IsEmpty());
  EXPECT_THAT(ListDir(target_), ElementsAre("bystander"));
}

TEST_P(OsDirTest, CleanupLeavesFilesItDidNotCreateAndSaysSo) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "mine");
  std::ofstream(d->Describe("theirs")) << "keep";
  CleanupReport report = d->Cleanup();
  EXPECT_EQ(report.removed, 1);
  ASSERT_EQ(report.left.size(), 1u);
  EXPECT_THAT(report.left[0], HasSubstr(".stormark-p1: holds files this phase did not create"));
  EXPECT_THAT(ListDir(target_ + "/.stormark-p1"), ElementsAre("theirs"));
}

TEST_P(OsDirTest, CleanupIsIdempotentAndSparesANewPhaseDirectoryOfTheSameName) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "a");
  EXPECT_EQ(d->Cleanup().removed, 2);
  auto again = MustCreate("p1");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(d->Cleanup().removed, 0);
  EXPECT_THAT(ListDir(target_), ElementsAre(".stormark-p1"));
}

TEST_P(OsDirTest, DestructorCleansUp) {
  {
    auto d = MustCreate("p1");
    ASSERT_NE(d, nullptr);
    Touch(*d, "a");
  }
  EXPECT_THAT(ListDir(target_), IsEmpty());
}

TEST_P(OsDirTest, FilesGoInDirectoriesThePhaseCreatedAndListingsShowThem) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->CreateDirectory("d").ok());
  ASSERT_TRUE(d->CreateDirectory("d/e").ok());
  Touch(*d, "d/e/f");
  Touch(*d, "d/e/g");
  EXPECT_THAT(ListDir(d->Describe("d/e")), ElementsAre("f", "g"));
  auto listing = d->List("d/e");
  ASSERT_TRUE(listing.ok()) << listing.status();
  std::vector<std::string> names;
  for (;;) {
    auto next = (*listing)->Next();
    ASSERT_TRUE(next.ok());
    if (!*next) break;
    names.push_back(**next);
  }
  std::sort(names.begin(), names.end());
  EXPECT_THAT(names, ElementsAre("f", "g"));
  auto info = d->Stat("d/e/f");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->size, 4u);
  EXPECT_FALSE(info->is_directory);
  EXPECT_TRUE(d->SyncDirectory("d/e").ok());
  EXPECT_TRUE(d->SyncFilesystem().ok());
  auto held = d->OpenDirectory("d");
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ((*held)->Sync(), 0);
}

TEST_P(OsDirTest, DirectoriesAndFilesNeedACreatedParent) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(mkdir(d->Describe("planted").c_str(), 0700), 0);
  for (const char* name : {"planted/f", "nope/f", "d/../../x"}) {
    EXPECT_EQ(d->CreateFile(name, O_WRONLY).status().code(), absl::StatusCode::kInvalidArgument)
        << name;
    EXPECT_EQ(d->CreateDirectory(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(d->List("planted").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(d->RemoveDirectory("planted").code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ListDir(d->Describe("planted")), IsEmpty());
}

TEST_P(OsDirTest, RemoveFileRemovesOnlyFilesThisPhaseCreated) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "mine");
  std::ofstream(d->Describe("theirs")) << "keep";
  EXPECT_TRUE(d->RemoveFile("mine").ok());
  EXPECT_EQ(d->RemoveFile("mine").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(d->RemoveFile("theirs").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(d->OpenFile("mine", O_RDONLY).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ListDir(d->Describe("")), ElementsAre("theirs"));
}

TEST_P(OsDirTest, CleanupRemovesNestedDirectoriesAfterTheirFiles) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->CreateDirectory("a").ok());
  ASSERT_TRUE(d->CreateDirectory("a/00000").ok());
  ASSERT_TRUE(d->CreateDirectory("a/00001").ok());
  Touch(*d, "a/00000/x");
  Touch(*d, "a/00001/y");
  Touch(*d, "top");
  EXPECT_EQ(d->Cleanup().removed, 7);
  EXPECT_THAT(ListDir(target_), IsEmpty());
}

// --- Attacks: what someone who can write where the agent works tries. ---

// The phase directory is moved away and a symbolic link to the victim put in its place,
// between Prepare and Run: the phase goes on in its own directory, wherever it is now.
TEST_P(OsDirTest, APhaseDirectorySwappedForASymlinkIsNotFollowed) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "data");
  const std::string phase = target_ + "/.stormark-p1";
  const std::string moved = dir() + "/moved";
  ASSERT_EQ(rename(phase.c_str(), moved.c_str()), 0);
  ASSERT_EQ(symlink(victim_.c_str(), phase.c_str()), 0);

  Touch(*d, "data");      // Truncates and writes its own file...
  Touch(*d, "precious");  // ...and a new one goes into its own directory.
  ExpectVictimUnchanged();
  EXPECT_THAT(ListDir(moved), ElementsAre("data", "precious"));

  CleanupReport report = d->Cleanup();
  EXPECT_EQ(report.removed, 2);  // Its two files, through its own descriptor.
  ASSERT_EQ(report.left.size(), 1u);
  EXPECT_THAT(report.left[0], HasSubstr("replaced by a symbolic link"));
  ExpectVictimUnchanged();
  EXPECT_THAT(ListDir(moved), IsEmpty());
  unlink(phase.c_str());
  rmdir(moved.c_str());
}

// The target directory itself is swapped after it was opened.
TEST_P(OsDirTest, ATargetDirectorySwappedAfterItWasOpenedChangesNothing) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  const std::string moved = dir() + "/moved-target";
  ASSERT_EQ(rename(target_.c_str(), moved.c_str()), 0);
  ASSERT_EQ(symlink(victim_.c_str(), target_.c_str()), 0);
  Touch(*d, "precious");
  ExpectVictimUnchanged();
  EXPECT_THAT(ListDir(moved + "/.stormark-p1"), ElementsAre("precious"));
  CleanupReport report = d->Cleanup();
  EXPECT_EQ(report.removed, 2);
  EXPECT_THAT(report.left, IsEmpty());
  EXPECT_THAT(ListDir(moved), IsEmpty());
  ExpectVictimUnchanged();
  unlink(target_.c_str());
  rename(moved.c_str(), target_.c_str());
}

// Opening, creating over or stat'ing the link is refused; removing the name removes the link
// (unlinkat never follows one), not what it points to.
TEST_P(OsDirTest, AFileReplacedByASymlinkIsNeverFollowed) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "precious");
  ASSERT_EQ(unlink(d->Describe("precious").c_str()), 0);
  ASSERT_EQ(symlink((victim_ + "/precious").c_str(), d->Describe("precious").c_str()), 0);

  auto opened = d->OpenFile("precious", O_RDWR);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(opened.status().message(), HasSubstr("is a symbolic link"));
  EXPECT_THAT(opened.status().message(), HasSubstr("target 'scratch'"));
  EXPECT_FALSE(d->CreateFile("precious", O_WRONLY).ok());
  EXPECT_FALSE(d->Stat("precious").ok());
  // Cleanup does stat first, and leaves the link, reported.
  CleanupReport report = d->Cleanup();
  ASSERT_FALSE(report.left.empty());
  EXPECT_THAT(report.left[0], HasSubstr("precious: replaced by a symbolic link"));
  ExpectVictimUnchanged();
  unlink(d->Describe("precious").c_str());
}

TEST_P(OsDirTest, RemovingAFileReplacedByALinkRemovesTheLinkOnly) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "sym");
  Touch(*d, "hard");
  ASSERT_EQ(unlink(d->Describe("sym").c_str()), 0);
  ASSERT_EQ(symlink((victim_ + "/precious").c_str(), d->Describe("sym").c_str()), 0);
  ASSERT_EQ(unlink(d->Describe("hard").c_str()), 0);
  ASSERT_EQ(link((victim_ + "/precious").c_str(), d->Describe("hard").c_str()), 0);
  EXPECT_TRUE(d->RemoveFile("sym").ok());
  EXPECT_TRUE(d->RemoveFile("hard").ok());
  EXPECT_THAT(ListDir(d->Describe("")), IsEmpty());
  struct stat st;
  ASSERT_EQ(stat((victim_ + "/precious").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
  ExpectVictimUnchanged();
}

// A directory put in a file's place is not removed.
TEST_P(OsDirTest, RemovingAFileReplacedByADirectoryIsRefused) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "f");
  ASSERT_EQ(unlink(d->Describe("f").c_str()), 0);
  ASSERT_EQ(mkdir(d->Describe("f").c_str(), 0700), 0);
  const common::Status removed = d->RemoveFile("f");
  EXPECT_EQ(removed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(removed.message(), HasSubstr("is a directory"));
  EXPECT_EQ(access(d->Describe("f").c_str(), F_OK), 0);
  rmdir(d->Describe("f").c_str());
}

// A second name for the victim, in place of the phase's file: writing or truncating it would
// write the victim.
TEST_P(OsDirTest, AFileReplacedByAHardLinkIsRefused) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "data");
  ASSERT_EQ(unlink(d->Describe("data").c_str()), 0);
  ASSERT_EQ(link((victim_ + "/precious").c_str(), d->Describe("data").c_str()), 0);
  EXPECT_EQ(d->OpenFile("data", O_RDWR).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(d->CreateFile("data", O_WRONLY).status().code(), absl::StatusCode::kFailedPrecondition);
  d->Cleanup();
  ExpectVictimUnchanged();
}

// A new file's name taken first by a hard link: O_EXCL refuses it, nothing is truncated.
TEST_P(OsDirTest, ANameTakenBeforeItIsCreatedIsRefused) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(link((victim_ + "/precious").c_str(), d->Describe("data").c_str()), 0);
  EXPECT_FALSE(d->CreateFile("data", O_WRONLY).ok());
  ASSERT_EQ(symlink((victim_ + "/precious").c_str(), d->Describe("link").c_str()), 0);
  EXPECT_FALSE(d->CreateFile("link", O_WRONLY).ok());
  unlink(d->Describe("data").c_str());
  unlink(d->Describe("link").c_str());
  ExpectVictimUnchanged();
}

// A subdirectory swapped before any of its files was reached: resolving it meets the link.
TEST_P(OsDirTest, ASubdirectoryReplacedByASymlinkIsNotEntered) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->CreateDirectory("d").ok());
  const std::string sub = d->Describe("d");
  ASSERT_EQ(rename(sub.c_str(), (dir() + "/moved-sub").c_str()), 0);
  ASSERT_EQ(symlink(victim_.c_str(), sub.c_str()), 0);

  EXPECT_FALSE(d->CreateFile("d/precious", O_WRONLY).ok());
  EXPECT_FALSE(d->List("d").ok());
  EXPECT_FALSE(d->CreateDirectory("d/e").ok());
  CleanupReport report = d->Cleanup();
  EXPECT_FALSE(report.left.empty());
  ExpectVictimUnchanged();
  unlink(sub.c_str());
  rmdir((dir() + "/moved-sub").c_str());
}

TEST_P(OsDirTest, AKeptSubdirectoryDescriptorStaysWithTheDirectoryThePhaseMade) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->CreateDirectory("d").ok());
  Touch(*d, "d/a");
  Touch(*d, "d/b");
  ASSERT_TRUE(d->Stat("d/a").ok());  // Keeps d's descriptor.
  const std::string sub = d->Describe("d");
  const std::string moved = dir() + "/moved-sub";
  ASSERT_EQ(rename(sub.c_str(), moved.c_str()), 0);
  ASSERT_EQ(symlink(victim_.c_str(), sub.c_str()), 0);

  // What goes through the kept descriptor acts on the phase's own directory, moved or not, as
  // the phase directory's does; what resolves the name anew meets the link and is refused.
  // Neither reaches the victim.
  EXPECT_TRUE(d->Stat("d/b").ok());
  EXPECT_TRUE(d->RemoveFile("d/a").ok());
  EXPECT_NE(access((moved + "/b").c_str(), F_OK), -1);
  EXPECT_EQ(access((moved + "/a").c_str(), F_OK), -1);
  Touch(*d, "d/new");
  EXPECT_NE(access((moved + "/new").c_str(), F_OK), -1);
  // Removing the directory drops the kept descriptor: it is not used for a new "d".
  EXPECT_FALSE(d->RemoveDirectory("d").ok());
  EXPECT_FALSE(d->Stat("d/b").ok());
  d->Cleanup();
  ExpectVictimUnchanged();
  unlink(sub.c_str());
}

// A new file's create is exclusive and no longer asks O_NONBLOCK: what someone put at the name
// before the phase made it (a FIFO, a link to a file outside) must still fail the create at once,
// without blocking, and leave the thing in place as it was.
TEST_P(OsDirTest, ACreateOverAFifoOrALinkPutInPlaceFailsAtOnce) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(mkfifo(d->Describe("fifo").c_str(), 0600), 0);
  ASSERT_EQ(symlink((victim_ + "/precious").c_str(), d->Describe("link").c_str()), 0);
  for (const char* name : {"fifo", "link"}) {
    auto created = d->CreateFile(name, O_WRONLY);
    EXPECT_FALSE(created.ok()) << name;
  }
  struct stat st;
  ASSERT_EQ(lstat(d->Describe("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  unlink(d->Describe("fifo").c_str());
  unlink(d->Describe("link").c_str());
  ExpectVictimUnchanged();
}

TEST_P(OsDirTest, AFifoInPlaceOfAFileDoesNotBlockAndIsRefused) {
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  Touch(*d, "data");
  ASSERT_EQ(unlink(d->Describe("data").c_str()), 0);
  ASSERT_EQ(mkfifo(d->Describe("data").c_str(), 0600), 0);
  for (int flags : {O_RDONLY, O_WRONLY, O_RDWR}) {
    auto opened = d->OpenFile("data", flags);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(opened.status().message(), HasSubstr("FIFO"));
    EXPECT_THAT(opened.status().message(), HasSubstr("not what this phase created"));
  }
  unlink(d->Describe("data").c_str());
}

// Another filesystem mounted over a directory of the phase: never entered (root only).
TEST_P(OsDirTest, AMountOverAPhaseDirectoryIsNotEntered) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting needs root";
  auto d = MustCreate("p1");
  ASSERT_NE(d, nullptr);
  ASSERT_TRUE(d->CreateDirectory("d").ok());
  const std::string sub = d->Describe("d");
  ASSERT_EQ(mount("stormark-test", sub.c_str(), "tmpfs", 0, "size=1m"), 0) << errno;
  std::ofstream(sub + "/theirs") << "keep";
  EXPECT_FALSE(d->CreateFile("d/x", O_WRONLY).ok());
  EXPECT_FALSE(d->List("d").ok());
  d->AdoptContents();
  CleanupReport report = d->Cleanup();
  EXPECT_FALSE(report.left.empty());
  EXPECT_EQ(Slurp(sub + "/theirs"), "keep");
  ASSERT_EQ(umount(sub.c_str()), 0);
  rmdir(sub.c_str());
  rmdir((target_ + "/.stormark-p1").c_str());
}

INSTANTIATE_TEST_SUITE_P(Resolvers, OsDirTest,
                         ::testing::Values(Resolver::kOpenat2, Resolver::kWalk),
                         [](const ::testing::TestParamInfo<Resolver>& info) {
                           return info.param == Resolver::kOpenat2 ? "Openat2" : "Walk";
                         });

}  // namespace
}  // namespace stormark::agent
