#include "agent/config/executables.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log_text.h"
#include "common/strings.h"

namespace stormark::agent {

common::StatusOr<std::string> FindExecutable(std::string_view name) {
  std::string found;
  return FindExecutable(name, &found);
}

common::StatusOr<std::string> FindExecutable(std::string_view name, std::string* found) {
  if (name.empty()) return absl::InvalidArgumentError("empty program name");
  std::string candidate;
  if (name.find('/') != std::string_view::npos) {
    candidate = std::string(name);
  } else {
    const char* path_env = getenv("PATH");
    const std::string path =
        path_env != nullptr && *path_env != '\0' ? path_env : "/usr/local/bin:/usr/bin:/bin";
    for (std::string_view dir : common::Split(path, ':')) {
      if (dir.empty()) continue;
      std::string full = common::StrCat(dir, "/", name);
      struct stat st;
      if (stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(full.c_str(), X_OK) == 0) {
        candidate = std::move(full);
        break;
      }
    }
    if (candidate.empty()) {
      return absl::NotFoundError(
          common::StrCat("program '", common::LogSafe(name), "' is not in PATH (", path, ")"));
    }
  }
  *found = candidate;
  char real[PATH_MAX];
  if (realpath(candidate.c_str(), real) == nullptr) {
    return absl::NotFoundError(common::StrCat("program '", common::LogSafe(name), "': ",
                                              common::LogSafe(candidate, 256), " does not exist"));
  }
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISREG(st.st_mode) || access(real, X_OK) != 0) {
    return absl::FailedPreconditionError(common::StrCat("program '", common::LogSafe(name),
                                                        "': ", common::LogSafe(real, 256),
                                                        " is not an executable file"));
  }
  return std::string(real);
}

}  // namespace stormark::agent
