#include "agent/devices/aoe/aoe_address.h"

#include "gtest/gtest.h"

namespace stormark::agent::aoe {
namespace {

TEST(AoeAddress, ParsesInterfaceShelfAndSlot) {
  auto address = ParseAoeAddress("aoe://veth0/1.0");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->interface, "veth0");
  EXPECT_EQ(address->shelf, 1);
  EXPECT_EQ(address->slot, 0);
  EXPECT_EQ(address->ToString(), "aoe://veth0/1.0");
  address = ParseAoeAddress("aoe://eth1/65534.254");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(address->shelf, 65534);
  EXPECT_EQ(address->slot, 254);
}

TEST(AoeAddress, ErrorsSayWhatIsWrong) {
  for (const char* bad : {"eth0/1.0", "aoe://eth0", "aoe:///1.0", "aoe://eth0/1", "aoe://eth0/x.0",
                          "aoe://eth0/65535.0", "aoe://eth0/1.255", "aoe://eth0/1.0.1",
                          "aoe://averyveryverylongname/1.0"}) {
    auto address = ParseAoeAddress(bad);
    ASSERT_FALSE(address.ok()) << bad;
    EXPECT_NE(std::string(address.status().message()).find("aoe://IFACE/SHELF.SLOT"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace stormark::agent::aoe
