#include "common/version.h"

#include "common/strings.h"

namespace stormark::common {

stormark::v1::Version OurProtocol() {
  stormark::v1::Version v;
  v.set_major(kProtocolMajor);
  v.set_minor(kProtocolMinor);
  return v;
}

std::string VersionText(std::string_view program) {
  return common::StrCat(program, " ", kSoftwareVersion, "\ncommit ", kGitCommit, "\nprotocol ",
                        FormatVersion(OurProtocol()));
}

std::string FormatVersion(const stormark::v1::Version& version) {
  return common::StrCat(version.major(), ".", version.minor());
}

Status CheckProtocolCompatible(const stormark::v1::Version& ours, std::string_view our_role,
                               const stormark::v1::Version& theirs, std::string_view their_role) {
  if (theirs.major() == ours.major()) return absl::OkStatus();
  return absl::FailedPreconditionError(common::StrCat(
      their_role, " speaks protocol ", FormatVersion(theirs), ", ", our_role, " speaks ",
      FormatVersion(ours), ": major versions differ; run matching stormark releases"));
}

}  // namespace stormark::common
