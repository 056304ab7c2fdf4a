// Who a held phase belongs to: the identity that prepared it, and the random token its
// Prepare returned. Run, Abort, Cleanup and Heartbeat of the phase must come from that
// identity with that token; until Prepare has returned (nobody can hold the token yet) the
// identity alone may Abort and Heartbeat it.
//
// A refusal names the caller and says the phase belongs to another identity; it never names
// the owner (a controller learns no more than GetInfo tells it) nor the token.
//
// Plain value; thread-compatible (the phase runner guards it with its mutex).
#ifndef STORMARK_AGENT_ACCESS_PHASE_OWNER_H_
#define STORMARK_AGENT_ACCESS_PHASE_OWNER_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::agent {

// 128 random bits from getrandom(2), as 32 lower-case hex digits. INTERNAL when the kernel
// gives none.
common::StatusOr<std::string> NewPhaseToken();

class PhaseOwner {
 public:
  // Nobody: every Check fails.
  PhaseOwner() = default;
  PhaseOwner(std::string identity, std::string token)
      : identity_(std::move(identity)), token_(std::move(token)) {}

  const std::string& identity() const { return identity_; }
  const std::string& token() const { return token_; }

  // Prepare has handed the token out: from now on every call must carry it.
  void Issue() { issued_ = true; }

  // OK when `caller`, presenting `token`, may `verb` ("run", "abort", ...) phase `phase_id`;
  // PERMISSION_DENIED otherwise:
  //   "CN=ci-2 may not abort phase 'p1': it belongs to another identity (the one that
  //   prepared it)"
  //   "CN=ci may not run phase 'p1': the request does not carry the phase's token (the
  //   phase_token its Prepare returned)"
  common::Status Check(std::string_view caller, std::string_view token, std::string_view verb,
                       std::string_view phase_id) const;

 private:
  std::string identity_;
  std::string token_;
  bool issued_ = false;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_ACCESS_PHASE_OWNER_H_
