#include "common/version.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::common {
namespace {

using ::testing::HasSubstr;

stormark::v1::Version MakeVersion(uint32_t major, uint32_t minor) {
  stormark::v1::Version v;
  v.set_major(major);
  v.set_minor(minor);
  return v;
}

TEST(Version, OurProtocolMatchesTheProto) {
  EXPECT_EQ(OurProtocol().major(), static_cast<uint32_t>(stormark::v1::PROTOCOL_MAJOR));
  EXPECT_EQ(OurProtocol().minor(), kProtocolMinor);
  EXPECT_FALSE(kSoftwareVersion.empty());
}

TEST(Version, FormatVersionIsMajorDotMinor) {
  EXPECT_EQ(FormatVersion(MakeVersion(1, 0)), "1.0");
  EXPECT_EQ(FormatVersion(MakeVersion(2, 13)), "2.13");
}

TEST(CheckProtocolCompatible, EqualMajorsAreCompatible) {
  EXPECT_TRUE(
      CheckProtocolCompatible(MakeVersion(1, 0), "agent", MakeVersion(1, 0), "controller").ok());
  EXPECT_TRUE(
      CheckProtocolCompatible(MakeVersion(1, 0), "agent", MakeVersion(1, 7), "controller").ok());
  EXPECT_TRUE(
      CheckProtocolCompatible(MakeVersion(1, 3), "agent", MakeVersion(1, 0), "controller").ok());
}

TEST(CheckProtocolCompatible, DifferentMajorsFailNamingBothVersionsAndRoles) {
  Status status =
      CheckProtocolCompatible(MakeVersion(1, 0), "this controller", MakeVersion(2, 1), "agent");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("agent speaks protocol 2.1"));
  EXPECT_THAT(status.message(), HasSubstr("this controller speaks 1.0"));
  EXPECT_THAT(status.message(), HasSubstr("major versions differ"));
}

}  // namespace
}  // namespace stormark::common
