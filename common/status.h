// Errors are values: absl::Status and absl::StatusOr<T>, with the codes gRPC uses.
// Debian's abseil 20220623 has no RETURN_IF_ERROR, so it is defined here.
#ifndef STORMARK_COMMON_STATUS_H_
#define STORMARK_COMMON_STATUS_H_

#include <cerrno>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace stormark::common {

using absl::Status;
using absl::StatusOr;

// An error from a failed system call: "what: strerror(errno)", with a code that matches
// errno (NOT_FOUND for ENOENT, PERMISSION_DENIED for EACCES, ...).
Status ErrnoError(std::string_view what, int errno_value);

// Prefixes the message of a non-OK status with context ("host a:7420: ..."). OK passes through.
Status Annotate(const Status& status, std::string_view context);

}  // namespace stormark::common

#define STORMARK_CONCAT_INNER_(a, b) a##b
#define STORMARK_CONCAT_(a, b) STORMARK_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define RETURN_IF_ERROR(expr)                            \
  do {                                                   \
    ::absl::Status stormark_status_ = (expr);            \
    if (!stormark_status_.ok()) return stormark_status_; \
  } while (0)

// ASSIGN_OR_RETURN(auto x, StatusOrExpr): declares x from the value, or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(STORMARK_CONCAT_(stormark_or_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(tmp).value()

#endif  // STORMARK_COMMON_STATUS_H_
