#include "agent/targets/dir/dir_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "agent/dir/beneath.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// How the configured directory is opened.
class OpenPhaseDirTest : public TempDirTest {};

TEST_F(OpenPhaseDirTest, AMissingDirectoryIsNotFound) {
  TargetConfig target{"scratch", "dir", dir() + "/gone"};
  auto d = OpenPhaseDir(target, "p1");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(d.status().message(), HasSubstr("target 'scratch'"));
}

TEST_F(OpenPhaseDirTest, ASymlinkedTargetIsRefusedWithWhatToConfigure) {
  ASSERT_EQ(mkdir((dir() + "/real").c_str(), 0700), 0);
  ASSERT_EQ(symlink((dir() + "/real").c_str(), (dir() + "/link").c_str()), 0);
  TargetConfig target{"scratch", "dir", dir() + "/link"};
  auto d = OpenPhaseDir(target, "p1");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(d.status().message(), HasSubstr("is a symbolic link"));
  EXPECT_THAT(d.status().message(), HasSubstr("configure " + dir() + "/real instead"));
  EXPECT_THAT(ListDir(dir() + "/real"), IsEmpty());
}

TEST_F(OpenPhaseDirTest, ASymlinkAboveTheTargetIsRefusedAndNothingIsWrittenWhereItLeads) {
  // An ancestor swapped for a link (as a user who may write above the target could do):
  // the phase must not land in the directory the link leads to.
  ASSERT_EQ(mkdir((dir() + "/real").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((dir() + "/real/t").c_str(), 0700), 0);
  ASSERT_EQ(symlink((dir() + "/real").c_str(), (dir() + "/link").c_str()), 0);
  TargetConfig target{"scratch", "dir", dir() + "/link/t"};
  auto d = OpenPhaseDir(target, "p1");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(d.status().message(), HasSubstr("a directory above " + dir() + "/link/t"));
  EXPECT_THAT(d.status().message(), HasSubstr("configure " + dir() + "/real/t instead"));
  EXPECT_THAT(ListDir(dir() + "/real/t"), IsEmpty());
}

TEST_F(OpenPhaseDirTest, BothResolversRefuseALinkAnywhereOnThePathAndOpenARealOne) {
  ASSERT_EQ(mkdir((dir() + "/real").c_str(), 0700), 0);
  ASSERT_EQ(symlink((dir() + "/real").c_str(), (dir() + "/link").c_str()), 0);
  for (Resolver resolver : {Resolver::kOpenat2, Resolver::kWalk}) {
    for (const std::string& bad : {dir() + "/link", dir() + "/link/", dir() + "/link/."}) {
      const int fd = OpenFromRootNoSymlinks(bad, O_RDONLY | O_DIRECTORY, resolver);
      EXPECT_LT(fd, 0) << bad;
      if (fd >= 0) close(fd);
    }
    const int fd = OpenFromRootNoSymlinks(dir() + "/real/", O_RDONLY | O_DIRECTORY, resolver);
    EXPECT_GE(fd, 0) << strerror(errno);
    if (fd >= 0) close(fd);
    EXPECT_LT(OpenFromRootNoSymlinks("relative/path", O_RDONLY, resolver), 0);
  }
}

TEST_F(OpenPhaseDirTest, AFileIsNotADirectory) {
  std::ofstream(dir() + "/file") << "x";
  TargetConfig target{"scratch", "dir", dir() + "/file"};
  auto d = OpenPhaseDir(target, "p1");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("is not a directory"));
}

TEST_F(OpenPhaseDirTest, AFileDeviceOverAPhaseFileUsesItsCheckedDescriptor) {
  TargetConfig target{"scratch", "dir", dir()};
  auto d = OpenPhaseDir(target, "p1");
  ASSERT_TRUE(d.ok()) << d.status();
  auto file = (*d)->CreateFile("data", O_RDWR);
  ASSERT_TRUE(file.ok());
  ASSERT_EQ((*file)->Truncate(8192), 0);
  FileDeviceOptions options;
  options.writable = true;
  auto device = OpenFileDevice(**d, "data", options);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->size(), 8192u);
  EXPECT_EQ((*device)->Describe(), (*d)->Describe("data") + " (psync)");
  EXPECT_EQ(OpenFileDevice(**d, "other", options).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace stormark::agent
