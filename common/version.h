// Software and protocol versions, and the compatibility rule between controller and agent.
#ifndef STORMARK_COMMON_VERSION_H_
#define STORMARK_COMMON_VERSION_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// The release of this build, from the top-level CMakeLists project() version.
inline constexpr std::string_view kSoftwareVersion = STORMARK_VERSION;

// The protocol this build speaks. Major must match proto's PROTOCOL_MAJOR.
inline constexpr uint32_t kProtocolMajor = stormark::v1::PROTOCOL_MAJOR;
// Minor 1: randio (RandioSpec, VerifyReport, stonewall figures, block and null target facts).
// Minor 2: phase ownership (PrepareReply.phase_token, carried by Run, Abort, Cleanup and
// Heartbeat; AbortHeldPhase). An agent refuses Prepare from an older controller, which would
// not send the token.
// Minor 3: a Run armed ahead of its start (RunRequest.await_start, RunUpdate.armed), started by
// a Start call. A controller starts an older agent's Run with its instant, as before.
inline constexpr uint32_t kProtocolMinor = 3;
inline constexpr uint32_t kPhaseTokenMinor = 2;
inline constexpr uint32_t kArmedStartMinor = 3;

// The git commit this build was made from: 12 hex digits, "-dirty" appended when the tree
// had changes, or "unknown" when it was built outside a git checkout. Taken at build time
// (cmake/GitCommit.cmake).
extern const char kGitCommit[];

stormark::v1::Version OurProtocol();

// What `--version` prints for `program`, three lines for people and help2man alike:
//   stormark-agent 0.1.0
//   commit 03149cc1a2b3
//   protocol 1.1
std::string VersionText(std::string_view program);

// "1.0".
std::string FormatVersion(const stormark::v1::Version& version);

// OK when the two protocol versions can work together (equal majors). Otherwise
// FAILED_PRECONDITION naming both, for example "agent speaks protocol 2.0, this controller
// speaks 1.0: major versions differ; upgrade one of them".
Status CheckProtocolCompatible(const stormark::v1::Version& ours, std::string_view our_role,
                               const stormark::v1::Version& theirs, std::string_view their_role);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_VERSION_H_
