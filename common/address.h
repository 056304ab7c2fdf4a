// Agent addresses as users write them: "HOST:PORT", "[v6]:PORT" or "unix:/path".
#ifndef STORMARK_COMMON_ADDRESS_H_
#define STORMARK_COMMON_ADDRESS_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::common {

// Checks an address and returns it in gRPC's target form. A bare "HOST" gets the default
// port 7420. INVALID_ARGUMENT names the address and the problem.
StatusOr<std::string> NormalizeAddress(std::string_view address);

// Whether `address` says where to connect by itself: a unix socket, or a PORT given; false
// when NormalizeAddress would add the default port.
bool AddressHasPort(std::string_view address);

// True for unix sockets and for the loopback names and ranges (localhost, 127.0.0.0/8, ::1).
// Plain-text gRPC is allowed only on these without --insecure.
bool IsLoopbackAddress(std::string_view address);

inline constexpr int kDefaultAgentPort = 7420;

}  // namespace stormark::common

#endif  // STORMARK_COMMON_ADDRESS_H_
