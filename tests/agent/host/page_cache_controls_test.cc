#include "agent/host/page_cache_controls.h"

#include <fstream>
#include <sstream>

#include "common/cache_report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

class PageCacheTest : public TempDirTest {
 protected:
  std::string FakeDropCaches() {
    const std::string path = dir() + "/drop_caches";
    std::ofstream(path) << "";
    return path;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST_F(PageCacheTest, KeepDoesNothing) {
  const std::string path = FakeDropCaches();
  const auto report = PageCache(common::SystemClock(), path).Apply(stormark::v1::CACHE_KEEP, true);
  EXPECT_FALSE(report.synced());
  EXPECT_FALSE(report.dropped());
  EXPECT_EQ(Read(path), "");
  EXPECT_THAT(common::DescribeCacheReport(report), IsEmpty());
}

TEST_F(PageCacheTest, SyncSyncsOnly) {
  const std::string path = FakeDropCaches();
  const auto report = PageCache(common::SystemClock(), path).Apply(stormark::v1::CACHE_SYNC, true);
  EXPECT_TRUE(report.synced());
  EXPECT_FALSE(report.dropped());
  EXPECT_THAT(report.not_done(), IsEmpty());
  EXPECT_EQ(Read(path), "");
}

TEST_F(PageCacheTest, DropSyncsThenWritesThree) {
  const std::string path = FakeDropCaches();
  const auto report = PageCache(common::SystemClock(), path).Apply(stormark::v1::CACHE_DROP, true);
  EXPECT_TRUE(report.synced());
  EXPECT_TRUE(report.dropped());
  EXPECT_EQ(Read(path), "3\n");
  EXPECT_THAT(common::DescribeCacheReport(report), HasSubstr("page cache dropped"));
}

TEST_F(PageCacheTest, DropForbiddenByPolicyNamesTheSetting) {
  const std::string path = FakeDropCaches();
  const auto report = PageCache(common::SystemClock(), path).Apply(stormark::v1::CACHE_DROP, false);
  EXPECT_TRUE(report.synced());
  EXPECT_FALSE(report.dropped());
  EXPECT_EQ(Read(path), "");
  EXPECT_THAT(report.not_done(), HasSubstr("allow_drop_caches: false"));
  EXPECT_THAT(common::DescribeCacheReport(report), HasSubstr("NOT dropped"));
}

TEST_F(PageCacheTest, DropRefusedByTheSystemSaysWhy) {
  const std::string path = dir() + "/no-such-dir/drop_caches";
  const auto report = PageCache(common::SystemClock(), path).Apply(stormark::v1::CACHE_DROP, true);
  EXPECT_FALSE(report.dropped());
  EXPECT_THAT(report.not_done(), HasSubstr(path));
  EXPECT_THAT(report.not_done(), HasSubstr("No such file"));
}

}  // namespace
}  // namespace stormark::agent
