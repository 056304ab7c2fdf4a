#include "common/status.h"

#include <cstring>

#include "common/strings.h"

namespace stormark::common {

Status ErrnoError(std::string_view what, int errno_value) {
  std::string message = common::StrCat(what, ": ", std::strerror(errno_value));
  switch (errno_value) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case EINVAL:
      return absl::InvalidArgumentError(message);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(message);
    case EINTR:
    case ECANCELED:
      return absl::CancelledError(message);
    default:
      return absl::InternalError(message);
  }
}

Status Annotate(const Status& status, std::string_view context) {
  if (status.ok()) return status;
  return Status(status.code(), common::StrCat(context, ": ", status.message()));
}

}  // namespace stormark::common
