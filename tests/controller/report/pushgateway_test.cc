#include "controller/report/pushgateway.h"

#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

TEST(PushgatewayGroupUrl, AddsTheStormarkJobToABareGateway) {
  EXPECT_EQ(*PushgatewayGroupUrl("http://pg:9091"), "http://pg:9091/metrics/job/stormark");
  EXPECT_EQ(*PushgatewayGroupUrl("https://pg:9091/"), "https://pg:9091/metrics/job/stormark");
}

TEST(PushgatewayGroupUrl, KeepsAGroupTheUserNamed) {
  EXPECT_EQ(*PushgatewayGroupUrl("http://pg:9091/metrics/job/nightly/array/md0"),
            "http://pg:9091/metrics/job/nightly/array/md0");
}

TEST(PushgatewayGroupUrl, RefusesOtherSchemes) {
  for (const char* bad : {"pg:9091", "ftp://pg", "http://", "file:///tmp/x"}) {
    auto url = PushgatewayGroupUrl(bad);
    ASSERT_FALSE(url.ok()) << bad;
    EXPECT_NE(std::string(url.status().message()).find("--push"), std::string::npos);
  }
}

}  // namespace
}  // namespace stormark::controller
