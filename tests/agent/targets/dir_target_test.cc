#include "agent/targets/dir_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
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

class DirTargetTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    config_ = ConfigWithTarget().targets[0];
  }

  std::unique_ptr<DirTarget> MustCreate(const std::string& phase_id) {
    common::StatusOr<std::unique_ptr<DirTarget>> target = DirTarget::Create(config_, phase_id);
    EXPECT_TRUE(target.ok()) << target.status();
    return target.ok() ? std::move(*target) : nullptr;
  }

  static void Touch(DirTarget& target, const std::string& name) {
    common::StatusOr<int> fd = target.CreateFile(name, O_WRONLY);
    ASSERT_TRUE(fd.ok()) << fd.status();
    ASSERT_EQ(write(*fd, "data", 4), 4);
    close(*fd);
  }

  TargetConfig config_;
};

TEST_F(DirTargetTest, CreateMakesThePhaseDirectory) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->phase_dir(), dir() + "/.stormark-p1");
  EXPECT_EQ(target->PathOf("f"), dir() + "/.stormark-p1/f");
  EXPECT_EQ(target->config().name, "scratch");
  struct stat st;
  ASSERT_EQ(stat(target->phase_dir().c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(DirTargetTest, CreateRejectsBadPhaseIds) {
  for (const char* id : {"", "..", "a/b", "../escape"}) {
    common::StatusOr<std::unique_ptr<DirTarget>> target = DirTarget::Create(config_, id);
    ASSERT_FALSE(target.ok()) << id;
    EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(DirTargetTest, CreateRefusesALeftOverPhaseDirectory) {
  ASSERT_EQ(mkdir((dir() + "/.stormark-p1").c_str(), 0700), 0);
  std::ofstream(dir() + "/.stormark-p1/precious") << "keep";
  common::StatusOr<std::unique_ptr<DirTarget>> target = DirTarget::Create(config_, "p1");
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(target.status().message(), HasSubstr(".stormark-p1"));
  EXPECT_THAT(ListDir(dir() + "/.stormark-p1"), ElementsAre("precious"));
}

TEST_F(DirTargetTest, CreateOnAMissingDirectoryFails) {
  config_.path = dir() + "/gone";
  common::StatusOr<std::unique_ptr<DirTarget>> target = DirTarget::Create(config_, "p1");
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(target.status().message(), HasSubstr("target 'scratch'"));
}

TEST_F(DirTargetTest, CreateFileRejectsNamesThatLeaveThePhaseDirectory) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  for (const char* name : {"", "..", "../x", "a/b", "/etc/passwd"}) {
    common::StatusOr<int> fd = target->CreateFile(name, O_WRONLY);
    ASSERT_FALSE(fd.ok()) << name;
    EXPECT_EQ(fd.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-p1"));
}

TEST_F(DirTargetTest, CreateFileTruncates) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  Touch(*target, "f");
  common::StatusOr<int> fd = target->CreateFile("f", O_WRONLY);
  ASSERT_TRUE(fd.ok()) << fd.status();
  close(*fd);
  struct stat st;
  ASSERT_EQ(stat(target->PathOf("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
}

TEST_F(DirTargetTest, OpenFileOpensOnlyFilesThisPhaseCreated) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  Touch(*target, "mine");
  std::ofstream(target->PathOf("planted")) << "x";

  common::StatusOr<int> fd = target->OpenFile("mine", O_RDONLY);
  ASSERT_TRUE(fd.ok()) << fd.status();
  char buf[8];
  EXPECT_EQ(read(*fd, buf, sizeof(buf)), 4);
  close(*fd);

  common::StatusOr<int> planted = target->OpenFile("planted", O_RDONLY);
  ASSERT_FALSE(planted.ok());
  EXPECT_EQ(planted.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(target->OpenFile("../../etc/passwd", O_RDONLY).ok());
}

TEST_F(DirTargetTest, CleanupRemovesExactlyWhatWasCreated) {
  std::ofstream(dir() + "/bystander") << "keep";
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  Touch(*target, "a");
  Touch(*target, "b");
  Touch(*target, "a");              // Created twice, removed once.
  EXPECT_EQ(target->Cleanup(), 3);  // a, b and the phase directory.
  EXPECT_THAT(ListDir(dir()), ElementsAre("bystander"));
}

TEST_F(DirTargetTest, CleanupLeavesFilesItDidNotCreate) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  Touch(*target, "mine");
  std::ofstream(target->PathOf("theirs")) << "keep";
  EXPECT_EQ(target->Cleanup(), 1);
  EXPECT_THAT(ListDir(target->phase_dir()), ElementsAre("theirs"));
}

TEST_F(DirTargetTest, CleanupIsIdempotent) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  Touch(*target, "a");
  EXPECT_EQ(target->Cleanup(), 2);
  EXPECT_EQ(target->Cleanup(), 0);
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(DirTargetTest, CleanupDoesNotRemoveANewPhaseDirectoryOfTheSameName) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->Cleanup(), 1);
  auto again = MustCreate("p1");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(target->Cleanup(), 0);
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-p1"));
}

TEST_F(DirTargetTest, DestructorCleansUp) {
  {
    auto target = MustCreate("p1");
    ASSERT_NE(target, nullptr);
    Touch(*target, "a");
  }
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(DirTargetTest, TwoPhasesKeepSeparateDirectories) {
  auto one = MustCreate("p1");
  auto two = MustCreate("p2");
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  Touch(*one, "f");
  Touch(*two, "f");
  one->Cleanup();
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-p2"));
  EXPECT_THAT(ListDir(two->phase_dir()), ElementsAre("f"));
}

TEST_F(DirTargetTest, FilesGoInDirectoriesThePhaseCreated) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  ASSERT_TRUE(target->CreateDirectory("d").ok());
  ASSERT_TRUE(target->CreateDirectory("d/e").ok());
  Touch(*target, "d/e/f");
  EXPECT_THAT(ListDir(target->phase_dir() + "/d/e"), ElementsAre("f"));
  common::StatusOr<int> fd = target->OpenFile("d/e/f", O_RDONLY);
  ASSERT_TRUE(fd.ok()) << fd.status();
  close(*fd);
  common::StatusOr<int> dir_fd = target->OpenDirectory("d/e");
  ASSERT_TRUE(dir_fd.ok()) << dir_fd.status();
  close(*dir_fd);
}

TEST_F(DirTargetTest, DirectoriesAndFilesNeedACreatedParent) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  ASSERT_EQ(mkdir(target->PathOf("planted").c_str(), 0700), 0);
  for (const char* name : {"planted/f", "nope/f", "d/../../x", "d//f"}) {
    EXPECT_EQ(target->CreateFile(name, O_WRONLY).status().code(),
              absl::StatusCode::kInvalidArgument)
        << name;
    EXPECT_EQ(target->CreateDirectory(name).code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(target->OpenDirectory("planted").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ListDir(target->PathOf("planted")), IsEmpty());
}

TEST_F(DirTargetTest, RemoveFileRemovesOnlyFilesThisPhaseCreated) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  Touch(*target, "mine");
  std::ofstream(target->PathOf("theirs")) << "keep";
  EXPECT_TRUE(target->RemoveFile("mine").ok());
  EXPECT_EQ(target->RemoveFile("mine").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(target->RemoveFile("theirs").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(target->OpenFile("mine", O_RDONLY).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ListDir(target->phase_dir()), ElementsAre("theirs"));
  EXPECT_EQ(target->Cleanup(), 0);  // The phase directory is not empty.
}

TEST_F(DirTargetTest, RemoveDirectoryRemovesOnlyDirectoriesThisPhaseCreated) {
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  ASSERT_TRUE(target->CreateDirectory("d").ok());
  ASSERT_EQ(mkdir(target->PathOf("planted").c_str(), 0700), 0);
  EXPECT_EQ(target->RemoveDirectory("planted").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(target->RemoveDirectory("d").ok());
  EXPECT_EQ(target->RemoveDirectory("d").code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ListDir(target->phase_dir()), ElementsAre("planted"));
}

TEST_F(DirTargetTest, CleanupRemovesNestedDirectoriesAfterTheirFiles) {
  std::ofstream(dir() + "/bystander") << "keep";
  auto target = MustCreate("p1");
  ASSERT_NE(target, nullptr);
  ASSERT_TRUE(target->CreateDirectory("a").ok());
  ASSERT_TRUE(target->CreateDirectory("a/00000").ok());
  ASSERT_TRUE(target->CreateDirectory("a/00001").ok());
  Touch(*target, "a/00000/x");
  Touch(*target, "a/00001/y");
  Touch(*target, "top");
  EXPECT_EQ(target->Cleanup(), 7);
  EXPECT_THAT(ListDir(dir()), ElementsAre("bystander"));
}

}  // namespace
}  // namespace stormark::agent
