#include "common/atomic_file.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace stormark::common {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/var/tmp/stormark-atomic-file-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_;
};

// Every name in the test's directory.
std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(AtomicFileTest, WritesAndReplacesWholeFilesLeavingNoTemporary) {
  const std::string path = dir_ + "/report.html";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second, longer").ok());
  EXPECT_EQ(Read(path), "second, longer");
  EXPECT_EQ(Names(dir_), std::vector<std::string>{"report.html"});
}

TEST_F(AtomicFileTest, AnUnwritablePlaceIsAnErrorNamingTheFileAndChangesNothing) {
  const std::string path = dir_ + "/missing-dir/report.html";
  const Status status = WriteFileAtomically(path, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find(path + ".tmp"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(AtomicFileTest, ADeviceIsWrittenInPlaceNotReplaced) {
  // The test's own /dev/null: `-o /dev/null` as root once made the host's a regular file.
  const std::string path = dir_ + "/null";
  if (mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod: " << std::strerror(errno) << " (needs root)";
  }
  ASSERT_TRUE(WriteFileAtomically(path, "discarded").ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  EXPECT_EQ(Names(dir_), std::vector<std::string>{"null"});
}

TEST_F(AtomicFileTest, APipeIsWrittenInPlaceAndALinkToItStays) {
  const std::string fifo = dir_ + "/fifo", link = dir_ + "/out";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(symlink(fifo.c_str(), link.c_str()), 0);
  std::string got;
  std::thread reader([&] { got = Read(fifo); });
  const Status written = WriteFileAtomically(link, [](const PieceFn& put) {
    put("a stream, ");
    put("in pieces");
  });
  reader.join();
  ASSERT_TRUE(written.ok()) << written;
  EXPECT_EQ(got, "a stream, in pieces");
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(AtomicFileTest, ALinkToAFileStaysAndTheFileItNamesIsReplaced) {
  const std::string file = dir_ + "/report-2026.html", link = dir_ + "/report.html";
  ASSERT_TRUE(WriteFileAtomically(file, "old").ok());
  ASSERT_EQ(symlink("report-2026.html", link.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(link, "new").ok());
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Read(file), "new");
  EXPECT_EQ(Names(dir_), (std::vector<std::string>{"report-2026.html", "report.html"}));
}

TEST_F(AtomicFileTest, ALinkToNothingOrADirectoryIsRefusedAndNothingIsCreated) {
  const std::string dangling = dir_ + "/dangling";
  ASSERT_EQ(symlink((dir_ + "/nowhere").c_str(), dangling.c_str()), 0);
  const Status to_nothing = WriteFileAtomically(dangling, "x");
  EXPECT_FALSE(to_nothing.ok());
  EXPECT_NE(std::string(to_nothing.message()).find("a symbolic link to a file that does not exist"),
            std::string::npos)
      << to_nothing;
  const Status directory = WriteFileAtomically(dir_, "x");
  EXPECT_FALSE(directory.ok());
  EXPECT_NE(std::string(directory.message()).find("it is a directory"), std::string::npos);
  EXPECT_EQ(Names(dir_), std::vector<std::string>{"dangling"});
}

TEST_F(AtomicFileTest, ALinkPlantedAtTheOldTemporaryNameIsNotWrittenThrough) {
  // Another user's link at "PATH.tmp", the name the temporary file always had.
  const std::string victim = dir_ + "/victim", path = dir_ + "/report.csv";
  ASSERT_TRUE(WriteFileAtomically(victim, "precious").ok());
  ASSERT_EQ(symlink(victim.c_str(), (path + ".tmp").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "report").ok());
  EXPECT_EQ(Read(victim), "precious");
  EXPECT_EQ(Read(path), "report");
}

TEST_F(AtomicFileTest, AReplacedFileKeepsItsModeAndANewOneFollowsTheUmask) {
  const std::string kept = dir_ + "/kept", fresh = dir_ + "/fresh";
  ASSERT_TRUE(WriteFileAtomically(kept, "1").ok());
  ASSERT_EQ(chmod(kept.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomically(kept, "2").ok());
  const mode_t old_mask = umask(027);
  const Status written = WriteFileAtomically(fresh, "3");
  umask(old_mask);
  ASSERT_TRUE(written.ok());
  struct stat st;
  ASSERT_EQ(stat(kept.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  ASSERT_EQ(stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);  // 0666 & ~027
}

}  // namespace
}  // namespace stormark::common
