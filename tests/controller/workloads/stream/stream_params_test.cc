#include "controller/workloads/stream/stream_params.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using stormark::v1::StreamSpec;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(SetStreamParameter, SetsEachParameter) {
  StreamSpec spec;
  ASSERT_TRUE(SetStreamParameter("rw", "write", &spec).ok());
  ASSERT_TRUE(SetStreamParameter("size", "8M", &spec).ok());
  ASSERT_TRUE(SetStreamParameter("bs", "64k", &spec).ok());
  ASSERT_TRUE(SetStreamParameter("direct", "on", &spec).ok());
  ASSERT_TRUE(SetStreamParameter("fdatasync", "true", &spec).ok());
  EXPECT_EQ(spec.direction(), StreamSpec::WRITE);
  EXPECT_EQ(spec.size_bytes(), 8 * kMiB);
  EXPECT_EQ(spec.block_size(), 64u * 1024);
  EXPECT_TRUE(spec.direct());
  EXPECT_TRUE(spec.fdatasync());
}

TEST(SetStreamParameter, ReadClearsFdatasync) {
  StreamSpec spec;
  spec.set_fdatasync(true);
  ASSERT_TRUE(SetStreamParameter("rw", "read", &spec).ok());
  EXPECT_EQ(spec.direction(), StreamSpec::READ);
  EXPECT_FALSE(spec.fdatasync());
}

TEST(SetStreamParameter, ErrorsNameTheParameterAndValue) {
  struct Case {
    const char* key;
    const char* value;
    std::vector<std::string> mentions;
  };
  const Case cases[] = {
      {"rw", "append", {"rw", "'append'"}},
      {"size", "10X", {"size", "'10X'"}},
      {"bs", "lots", {"bs", "'lots'"}},
      {"bs", "8G", {"bs", "'8G'"}},
      {"direct", "maybe", {"direct", "'maybe'"}},
      {"fdatasync", "2", {"fdatasync", "'2'"}},
      {"threads", "4", {"'threads'"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.key) + "=" + c.value);
    StreamSpec spec;
    const common::Status status = SetStreamParameter(c.key, c.value, &spec);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    for (const std::string& m : c.mentions) {
      EXPECT_THAT(std::string(status.message()), HasSubstr(m));
    }
  }
}

TEST(SetStreamParameter, ErrorLeavesTheSpecUnchanged) {
  StreamSpec spec;
  spec.set_size_bytes(4096);
  EXPECT_FALSE(SetStreamParameter("size", "-1", &spec).ok());
  EXPECT_EQ(spec.size_bytes(), 4096u);
}

}  // namespace
}  // namespace stormark::controller
