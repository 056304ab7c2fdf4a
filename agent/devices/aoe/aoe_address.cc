#include "agent/devices/aoe/aoe_address.h"

#include <net/if.h>

#include <charconv>

#include "common/strings.h"

namespace stormark::agent::aoe {
namespace {

bool ParseNumber(std::string_view text, uint32_t max, uint32_t* out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out <= max;
}

}  // namespace

std::string AoeAddress::ToString() const {
  return common::StrCat("aoe://", interface, "/", shelf, ".", slot);
}

common::StatusOr<AoeAddress> ParseAoeAddress(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        common::StrCat("'", text, "' is not an AoE address aoe://IFACE/SHELF.SLOT (", why, ")"));
  };
  constexpr std::string_view kScheme = "aoe://";
  if (!text.starts_with(kScheme)) return bad("it must start with aoe://");
  const std::string_view rest = text.substr(kScheme.size());
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return bad("no /SHELF.SLOT after the interface");
  AoeAddress address;
  address.interface = std::string(rest.substr(0, slash));
  if (address.interface.empty() || address.interface.size() >= IFNAMSIZ ||
      address.interface.find_first_of(" /:") != std::string::npos) {
    return bad("the interface name is empty, too long or has a space, / or :");
  }
  const std::string_view target = rest.substr(slash + 1);
  const size_t dot = target.find('.');
  uint32_t shelf = 0, slot = 0;
  if (dot == std::string_view::npos || !ParseNumber(target.substr(0, dot), 65534, &shelf) ||
      !ParseNumber(target.substr(dot + 1), 254, &slot)) {
    return bad("SHELF is 0-65534 and SLOT 0-254, as in 1.0");
  }
  address.shelf = static_cast<uint16_t>(shelf);
  address.slot = static_cast<uint8_t>(slot);
  return address;
}

}  // namespace stormark::agent::aoe
