#include "agent/runner/thread_top.h"

#include "common/strings.h"

namespace stormark::agent {

common::Status ThreadTopError(std::string_view what, const std::exception& e, bool allocation) {
  try {
    if (allocation) {
      return absl::ResourceExhaustedError(common::StrCat(what, ": out of memory (", e.what(), ")"));
    }
    return absl::InternalError(common::StrCat(what, ": unexpected exception: ", e.what()));
  } catch (...) {
    // No memory left even for the message: a Status without one allocates
    // nothing.
    return allocation ? absl::ResourceExhaustedError("") : absl::InternalError("");
  }
}

}  // namespace stormark::agent
