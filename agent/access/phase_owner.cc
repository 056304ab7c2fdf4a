#include "agent/access/phase_owner.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "common/strings.h"

namespace stormark::agent {
namespace {

// Compares without an early exit, so the time taken says nothing about how much matched.
bool SameSecret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

common::StatusOr<std::string> NewPhaseToken() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InternalError(common::StrCat("getrandom: ", strerror(errno)));
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

common::Status PhaseOwner::Check(std::string_view caller, std::string_view token,
                                 std::string_view verb, std::string_view phase_id) const {
  if (identity_.empty() || caller != identity_) {
    return absl::PermissionDeniedError(
        common::StrCat(caller, " may not ", verb, " phase '", phase_id,
                       "': it belongs to another identity (the one that prepared it)"));
  }
  if (!issued_ && token.empty()) return absl::OkStatus();
  if (token_.empty() || !SameSecret(token, token_)) {
    return absl::PermissionDeniedError(
        common::StrCat(caller, " may not ", verb, " phase '", phase_id, "': the request ",
                       token.empty() ? "does not carry the" : "carries the wrong",
                       " phase token (the phase_token its Prepare returned)"));
  }
  return absl::OkStatus();
}

}  // namespace stormark::agent
