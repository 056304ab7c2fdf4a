#include "controller/workloads/postmark/postmark_params.h"

#include <string>

#include "common/spec_check.h"
#include "common/workloads/postmark/postmark_spec.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using stormark::v1::PostmarkSpec;
using ::testing::HasSubstr;

std::string SetError(const std::string& key, const std::string& value) {
  PostmarkSpec spec;
  const common::Status status = SetPostmarkParameter(key, value, &spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << key << "=" << value;
  return std::string(status.message());
}

TEST(SetPostmarkParameter, SetsEverySetting) {
  PostmarkSpec spec;
  for (const auto& [key, value] : {std::pair{"number", "2000"},
                                   {"size", "1k:9000"},
                                   {"transactions", "50000"},
                                   {"subdirectories", "10"},
                                   {"read", "4k"},
                                   {"write", "1000"},
                                   {"buffering", "false"},
                                   {"bias_read", "-1"},
                                   {"bias_create", "0"},
                                   {"seed", "7"},
                                   {"report", "terse"}}) {
    ASSERT_TRUE(SetPostmarkParameter(key, value, &spec).ok()) << key;
  }
  EXPECT_EQ(spec.number(), 2000u);
  EXPECT_EQ(spec.min_size_bytes(), 1024u);
  EXPECT_EQ(spec.max_size_bytes(), 9000u);
  EXPECT_EQ(spec.transactions(), 50000u);
  EXPECT_EQ(spec.subdirectories(), 10u);
  EXPECT_EQ(spec.read_block_size(), 4096u);
  EXPECT_EQ(spec.write_block_size(), 1000u);
  EXPECT_TRUE(spec.unbuffered());
  EXPECT_TRUE(spec.has_bias_read());
  EXPECT_EQ(spec.bias_read(), -1);
  EXPECT_TRUE(spec.has_bias_create());
  EXPECT_EQ(spec.bias_create(), 0);
  EXPECT_EQ(spec.seed(), 7u);
  EXPECT_EQ(spec.report(), PostmarkSpec::TERSE);
  EXPECT_TRUE(common::CheckPostmarkSpec(spec).ok());
}

TEST(SetPostmarkParameter, OneSizeIsAFixedSize) {
  PostmarkSpec spec;
  ASSERT_TRUE(SetPostmarkParameter("size", "4096", &spec).ok());
  EXPECT_EQ(spec.min_size_bytes(), 4096u);
  EXPECT_EQ(spec.max_size_bytes(), 4096u);
}

TEST(SetPostmarkParameter, BadValuesNameTheParameterAndTheRange) {
  EXPECT_THAT(SetError("number", "0"), HasSubstr("bad number '0': expected a whole number from 1"));
  EXPECT_THAT(SetError("number", "2k"), HasSubstr("bad number '2k'"));
  EXPECT_THAT(SetError("transactions", "-5"), HasSubstr("bad transactions '-5'"));
  EXPECT_THAT(SetError("size", "9000:1000"), HasSubstr("the high end is below the low end"));
  EXPECT_THAT(SetError("size", "1:2:3"), HasSubstr("or LOW:HIGH"));
  EXPECT_THAT(SetError("size", "0:100"), HasSubstr("bad size '0:100'"));
  EXPECT_THAT(SetError("size", "1:1G"), HasSubstr("expected sizes from 1 to 256M"));
  EXPECT_THAT(SetError("read", "0"), HasSubstr("bad read '0'"));
  EXPECT_THAT(SetError("bias_read", "11"), HasSubstr("from -1 to 10"));
  EXPECT_THAT(SetError("bias_create", "-2"), HasSubstr("from -1 to 10"));
  EXPECT_THAT(SetError("seed", "0"), HasSubstr("from 1 to 2147483647"));
  EXPECT_THAT(SetError("buffering", "maybe"), HasSubstr("expected true or false"));
  EXPECT_THAT(SetError("report", "short"), HasSubstr("use verbose or terse"));
  EXPECT_THAT(SetError("config", "pm.cfg"), HasSubstr("--postmark-config FILE"));
  EXPECT_THAT(SetError("location", "/mnt"), HasSubstr("unknown postmark parameter 'location'"));
}

TEST(DescribePostmark, ShowsPostmarksDefaultsAndWhatDiffers) {
  EXPECT_EQ(DescribePostmark(PostmarkSpec()),
            "postmark 500 files of 500-10000 B, 500 transactions");
  PostmarkSpec spec;
  spec.set_number(2000);
  spec.set_min_size_bytes(1000);
  spec.set_max_size_bytes(1000);
  spec.set_transactions(50000);
  spec.set_subdirectories(10);
  spec.set_write_block_size(4096);
  spec.set_unbuffered(true);
  spec.set_bias_read(7);
  spec.set_seed(9);
  EXPECT_EQ(DescribePostmark(spec),
            "postmark 2000 files of 1000 B, 50000 transactions, 10 subdirectories, "
            "read/write 512/4k, unbuffered, bias read 7 create 5, seed 9");
}

}  // namespace
}  // namespace stormark::controller
