#include "common/address.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::common {
namespace {

using ::testing::HasSubstr;

std::string Normalized(std::string_view address) {
  StatusOr<std::string> out = NormalizeAddress(address);
  EXPECT_TRUE(out.ok()) << address << ": " << out.status();
  return out.ok() ? *out : "";
}

TEST(NormalizeAddress, KeepsHostAndPort) {
  EXPECT_EQ(Normalized("node1:9000"), "node1:9000");
  EXPECT_EQ(Normalized("10.0.0.7:7420"), "10.0.0.7:7420");
  EXPECT_EQ(Normalized("127.0.0.1:0"), "127.0.0.1:0");
}

TEST(NormalizeAddress, BareHostGetsDefaultPort) {
  EXPECT_EQ(Normalized("node1"), "node1:7420");
  EXPECT_EQ(Normalized("192.168.1.2"), "192.168.1.2:7420");
}

TEST(NormalizeAddress, BracketedIpv6) {
  EXPECT_EQ(Normalized("[::1]:9000"), "[::1]:9000");
  EXPECT_EQ(Normalized("[fe80::1]"), "[fe80::1]:7420");
}

TEST(NormalizeAddress, UnixSocketPassesThrough) {
  EXPECT_EQ(Normalized("unix:/run/stormark.sock"), "unix:/run/stormark.sock");
}

TEST(NormalizeAddress, RejectsBadAddressesNamingThem) {
  struct Case {
    const char* address;
    const char* why;
  };
  for (const Case& c :
       {Case{"", "empty"}, Case{"unix:", "socket path"}, Case{"::1", "needs brackets"},
        Case{"[::1", "missing ']'"}, Case{"[::1]9000", "expected ':PORT'"},
        Case{":9000", "no host"}, Case{"[]:9000", "no host"}, Case{"node1:http", "not a number"},
        Case{"node1:65536", "not a number"}, Case{"node1:-1", "not a number"},
        Case{"node1:80x", "not a number"}, Case{"18301", "a port alone names no host"}}) {
    StatusOr<std::string> out = NormalizeAddress(c.address);
    ASSERT_FALSE(out.ok()) << "'" << c.address << "' gave " << *out;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(out.status().message(), HasSubstr(c.why)) << c.address;
    EXPECT_THAT(out.status().message(), HasSubstr(std::string("'") + c.address + "'"));
  }
}

TEST(NormalizeAddress, APortAloneSaysHowToWriteIt) {
  StatusOr<std::string> out = NormalizeAddress("18301");
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("such as localhost:18301"));
}

TEST(AddressHasPort, OnlyWhenTheAddressSaysWhereToConnect) {
  EXPECT_TRUE(AddressHasPort("node1:9000"));
  EXPECT_TRUE(AddressHasPort("[::1]:9000"));
  EXPECT_TRUE(AddressHasPort("unix:/run/stormark.sock"));
  EXPECT_FALSE(AddressHasPort("localhost"));
  EXPECT_FALSE(AddressHasPort("[fe80::1]"));
}

TEST(IsLoopbackAddress, LoopbackNamesAndRanges) {
  EXPECT_TRUE(IsLoopbackAddress("localhost:7420"));
  EXPECT_TRUE(IsLoopbackAddress("localhost"));
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:7420"));
  EXPECT_TRUE(IsLoopbackAddress("127.1.2.3:1"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:7420"));
  EXPECT_TRUE(IsLoopbackAddress("unix:/run/stormark.sock"));
}

TEST(IsLoopbackAddress, OtherAddressesAreNot) {
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1:7420"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0:7420"));
  EXPECT_FALSE(IsLoopbackAddress("[::]:7420"));
  EXPECT_FALSE(IsLoopbackAddress("node1:7420"));
  EXPECT_FALSE(IsLoopbackAddress("128.0.0.1:7420"));
  EXPECT_FALSE(IsLoopbackAddress("[::1:7420"));
}

TEST(IsLoopbackAddress, HostNamesThatLookLikeLoopbackAreNot) {
  // A DNS name may resolve anywhere, whatever its first label.
  EXPECT_FALSE(IsLoopbackAddress("127.example.com:7420"));
  EXPECT_FALSE(IsLoopbackAddress("127.0.0.1.nip.io:7420"));
  EXPECT_FALSE(IsLoopbackAddress("localhost.example.com:7420"));
}

}  // namespace
}  // namespace stormark::common
