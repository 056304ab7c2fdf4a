#include "agent/dir/memory_dir.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "agent/dir/fault_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(MemoryDir, RefusesTheNamesOsDirRefuses) {
  MemoryDir dir;
  for (const char* name : {"", "..", "../x", "a/b", "/etc/passwd", "d//f"}) {
    EXPECT_EQ(dir.CreateFile(name, O_WRONLY).status().code(), absl::StatusCode::kInvalidArgument)
        << name;
  }
  EXPECT_EQ(dir.OpenFile("nope", O_RDONLY).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(dir.RemoveFile("nope").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(dir.List("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(MemoryDir, FilesReadWriteSeekAndAppendLikeFiles) {
  MemoryDir dir;
  ASSERT_TRUE(dir.CreateDirectory("d").ok());
  auto file = dir.CreateFile("d/f", O_RDWR);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->Write("hello", 5), 5);
  EXPECT_EQ((*file)->Seek(1, SEEK_SET), 1);
  char buf[8] = {};
  EXPECT_EQ((*file)->Read(buf, 3), 3);
  EXPECT_STREQ(buf, "ell");
  EXPECT_EQ((*file)->WriteAt("J", 1, 0), 1);
  auto appender = dir.OpenFile("d/f", O_WRONLY | O_APPEND);
  ASSERT_TRUE(appender.ok());
  EXPECT_EQ((*appender)->Write("!", 1), 1);
  EXPECT_EQ(*dir.Contents("d/f"), "Jello!");
  EXPECT_EQ((*appender)->Read(buf, 1), -EBADF);  // Opened write-only.
  auto info = dir.Stat("d/f");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, 6u);
  EXPECT_EQ(dir.RemoveDirectory("d").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(dir.Cleanup().removed, 2);
  EXPECT_THAT(dir.Names(), IsEmpty());
}

TEST(MemoryDir, StdioStreamsGoThroughTheFile) {
  MemoryDir dir;
  auto file = dir.CreateFile("f", O_WRONLY);
  ASSERT_TRUE(file.ok());
  std::FILE* out = (*file)->OpenStream("w");
  ASSERT_NE(out, nullptr);
  for (int i = 0; i < 10000; ++i) std::putc('a' + i % 26, out);
  ASSERT_EQ(std::fclose(out), 0);
  ASSERT_EQ(dir.Contents("f")->size(), 10000u);
  auto again = dir.OpenFile("f", O_RDONLY);
  std::FILE* in = (*again)->OpenStream("r");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(std::getc(in), 'a');
  EXPECT_EQ(std::getc(in), 'b');
  ASSERT_EQ(std::fclose(in), 0);
}

TEST(MemoryDir, ListingsShowADirectorysEntries) {
  MemoryDir dir;
  ASSERT_TRUE(dir.CreateDirectory("d").ok());
  ASSERT_TRUE(dir.CreateFile("d/b", O_WRONLY).ok());
  ASSERT_TRUE(dir.CreateFile("d/a", O_WRONLY).ok());
  ASSERT_TRUE(dir.CreateFile("top", O_WRONLY).ok());
  auto listing = dir.List("d");
  ASSERT_TRUE(listing.ok());
  std::vector<std::string> names;
  while (auto next = *(*listing)->Next()) names.push_back(*next);
  EXPECT_THAT(names, ElementsAre("a", "b"));
}

TEST(FaultDir, InjectsTheAskedFaultsOnly) {
  MemoryDir memory("scratch");
  DirFaults faults;
  faults.create_errno = ENOSPC;
  faults.creates_before_error = 1;
  faults.max_write_bytes = 3;
  faults.sync_errno = EIO;
  FaultDir dir(&memory, faults);
  auto first = dir.CreateFile("a", O_WRONLY);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)->Write("abcdef", 6), 3);  // Short.
  EXPECT_EQ((*first)->Sync(), -EIO);
  EXPECT_EQ((*first)->fd(), -1);  // No descriptor to get around the faults with.
  auto second = dir.CreateFile("b", O_WRONLY);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(second.status().message(), HasSubstr("target 'scratch': cannot create memory:b"));
  EXPECT_FALSE(dir.SyncFilesystem().ok());
  dir.faults() = DirFaults{};
  EXPECT_TRUE(dir.CreateFile("b", O_WRONLY).ok());
  EXPECT_EQ(*memory.Contents("a"), "abc");
}

}  // namespace
}  // namespace stormark::agent
