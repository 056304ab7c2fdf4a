#include "agent/targets/dir/dir_target.h"
#include "agent/workloads/postmark/postmark_files.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using Kind = PostmarkOp::Kind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class PostmarkFilesTest : public TempDirTest,
                          public ::testing::WithParamInterface<bool /* unbuffered */> {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    auto made = OpenPhaseDir(TargetConfig{"scratch", "dir", dir()}, "p");
    ASSERT_TRUE(made.ok()) << made.status();
    target_ = std::move(*made);
    params_.min_size = 10;
    params_.max_size = 2000;
    params_.read_block_size = 300;
    params_.write_block_size = 512;
    params_.unbuffered = GetParam();
    text_.resize(params_.max_size);
    for (size_t i = 0; i < text_.size(); ++i) text_[i] = static_cast<char>(32 + i % 95);
  }
  void TearDown() override {
    target_.reset();
    TempDirTest::TearDown();
  }

  PostmarkParams params_;
  std::string text_;
  std::unique_ptr<Dir> target_;
};

// Files hold the text's first bytes, as PostMark's do: a new file its size of them, and an
// append the first bytes again.
TEST_P(PostmarkFilesTest, CreateReadAppendDeleteMoveTheTextPostmarkWrites) {
  PostmarkFiles files(params_, target_.get(), text_);
  const PostmarkOp create{Kind::kCreate, 0, 17, 0, 1300};
  ASSERT_TRUE(files.Do(create).ok());
  const std::string path = target_->Describe("17");
  EXPECT_EQ(Contents(path), text_.substr(0, 1300));
  ASSERT_TRUE(files.Do(PostmarkOp{Kind::kRead, 0, 17, 0, 1300}).ok());
  ASSERT_TRUE(files.Do(PostmarkOp{Kind::kAppend, 0, 17, 0, 600}).ok());
  EXPECT_EQ(Contents(path), text_.substr(0, 1300) + text_.substr(0, 600));
  ASSERT_TRUE(files.Do(PostmarkOp{Kind::kRead, 0, 17, 0, 1900}).ok());
  // The model's size is the truth: a file shorter than it is an error, not a short read.
  const common::Status status = files.Do(PostmarkOp{Kind::kRead, 0, 17, 0, 1950});
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(status.message(), HasSubstr("17"));
  ASSERT_TRUE(files.Do(PostmarkOp{Kind::kDelete, 0, 17, 0, 0}).ok());
  EXPECT_THAT(ListDir(target_->Describe("")), IsEmpty());
  EXPECT_TRUE(files.Do(PostmarkOp{}).ok());  // kNone does nothing.
}

TEST_P(PostmarkFilesTest, SubdirectoriesAreNamedAsPostmarkNamesThem) {
  params_.subdirectories = 4;
  PostmarkFiles files(params_, target_.get(), text_);
  EXPECT_EQ(PostmarkFiles::DirName(3), "s3");
  EXPECT_EQ(files.NameOf(PostmarkOp{Kind::kCreate, 0, 25, 3, 10}), "s3/25");
  ASSERT_TRUE(target_->CreateDirectory("s3").ok());
  ASSERT_TRUE(files.Do(PostmarkOp{Kind::kCreate, 0, 25, 3, 512}).ok());
  EXPECT_THAT(ListDir(target_->Describe("s3")), ElementsAre("25"));
  params_.subdirectories = 1;  // One directory is none, as in PostMark.
  EXPECT_EQ(files.NameOf(PostmarkOp{Kind::kCreate, 0, 25, 0, 10}), "25");
}

TEST_P(PostmarkFilesTest, AFileThatVanishedIsAnError) {
  PostmarkFiles files(params_, target_.get(), text_);
  ASSERT_TRUE(files.Do(PostmarkOp{Kind::kCreate, 0, 1, 0, 100}).ok());
  ASSERT_EQ(unlink(target_->Describe("1").c_str()), 0);
  EXPECT_EQ(files.Do(PostmarkOp{Kind::kRead, 0, 1, 0, 100}).code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(files.Do(PostmarkOp{Kind::kDelete, 0, 1, 0, 0}).ok());
}

INSTANTIATE_TEST_SUITE_P(BufferedAndUnbuffered, PostmarkFilesTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Unbuffered" : "Buffered";
                         });

}  // namespace
}  // namespace stormark::agent
