#include "common/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>

#include "common/strings.h"

namespace stormark::common {
namespace {

struct HostPort {
  std::string_view host;
  std::string_view port;  // empty when absent
};

StatusOr<HostPort> Split(std::string_view address) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(common::StrCat("bad agent address '", address, "': ", why));
  };
  if (address.empty()) return bad("empty");
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == std::string_view::npos) return bad("missing ']'");
    HostPort hp{address.substr(1, close - 1), ""};
    std::string_view rest = address.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad("expected ':PORT' after ']'");
      hp.port = rest.substr(1);
    }
    return hp;
  }
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return HostPort{address, ""};
  if (address.find(':') != colon) return bad("an IPv6 address needs brackets: [::1]:7420");
  return HostPort{address.substr(0, colon), address.substr(colon + 1)};
}

}  // namespace

StatusOr<std::string> NormalizeAddress(std::string_view address) {
  if (address.starts_with("unix:")) {
    if (address.size() <= 5) {
      return absl::InvalidArgumentError(
          common::StrCat("bad agent address '", address, "': unix: needs a socket path"));
    }
    return std::string(address);
  }
  ASSIGN_OR_RETURN(HostPort hp, Split(address));
  if (hp.host.empty()) {
    return absl::InvalidArgumentError(
        common::StrCat("bad agent address '", address, "': no host name"));
  }
  if (hp.port.empty() && hp.host.find_first_not_of("0123456789") == std::string_view::npos) {
    return absl::InvalidArgumentError(common::StrCat("bad agent address '", address,
                                                     "': a port alone names no host; write ",
                                                     "HOST:PORT, such as localhost:", address));
  }
  int port = kDefaultAgentPort;
  if (!hp.port.empty()) {
    auto [ptr, ec] = std::from_chars(hp.port.data(), hp.port.data() + hp.port.size(), port);
    if (ec != std::errc() || ptr != hp.port.data() + hp.port.size() || port < 0 || port > 65535) {
      return absl::InvalidArgumentError(common::StrCat("bad agent address '", address, "': port '",
                                                       hp.port, "' is not a number 0-65535"));
    }
  }
  const bool v6 = hp.host.find(':') != std::string_view::npos;
  return v6 ? common::StrCat("[", hp.host, "]:", port) : common::StrCat(hp.host, ":", port);
}

bool AddressHasPort(std::string_view address) {
  if (address.starts_with("unix:")) return true;
  StatusOr<HostPort> hp = Split(address);
  return hp.ok() && !hp->port.empty();
}

bool IsLoopbackAddress(std::string_view address) {
  if (address.starts_with("unix:")) return true;
  StatusOr<HostPort> hp = Split(address);
  if (!hp.ok()) return false;
  if (hp->host == "localhost") return true;
  // Only address literals: a DNS name such as "127.example.com" may resolve anywhere.
  const std::string host(hp->host);
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace stormark::common
