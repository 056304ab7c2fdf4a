#include "agent/targets/dir_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/strings.h"

namespace stormark::agent {

common::StatusOr<std::unique_ptr<DirTarget>> DirTarget::Create(const TargetConfig& target,
                                                               std::string_view phase_id) {
  if (!IsValidName(phase_id)) {
    return absl::InvalidArgumentError(common::StrCat("bad phase id '", phase_id, "'"));
  }
  std::string dir = common::StrCat(target.path, "/.stormark-", phase_id);
  if (mkdir(dir.c_str(), 0700) != 0) {
    const int err = errno;
    if (err == EEXIST) {
      return absl::AlreadyExistsError(common::StrCat(
          "target '", target.name, "': ", dir,
          " already exists (left over from an earlier run? remove it by hand)"));
    }
    return common::ErrnoError(
        common::StrCat("target '", target.name, "': cannot create ", dir), err);
  }
  return std::unique_ptr<DirTarget>(new DirTarget(target, std::move(dir)));
}

DirTarget::DirTarget(TargetConfig config, std::string phase_dir)
    : config_(std::move(config)), phase_dir_(std::move(phase_dir)) {}

DirTarget::~DirTarget() { Cleanup(); }

std::string DirTarget::PathOf(std::string_view name) const {
  return common::StrCat(phase_dir_, "/", name);
}

common::StatusOr<int> DirTarget::CreateFile(std::string_view name, int flags) {
  if (!IsValidName(name)) {
    return absl::InvalidArgumentError(common::StrCat("bad file name '", name, "'"));
  }
  const std::string path = PathOf(name);
  const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_CLOEXEC | flags, 0600);
  if (fd < 0) {
    const int err = errno;
    if (err == EINVAL && (flags & O_DIRECT)) {
      return absl::InvalidArgumentError(common::StrCat(
          "target '", config_.name, "': the filesystem under ", config_.path,
          " does not support O_DIRECT (direct: true)"));
    }
    return common::ErrnoError(common::StrCat("target '", config_.name, "': cannot create ", path),
                              err);
  }
  if (std::find(files_.begin(), files_.end(), path) == files_.end()) files_.push_back(path);
  return fd;
}

common::StatusOr<int> DirTarget::OpenFile(std::string_view name, int flags) const {
  const std::string path = PathOf(name);
  if (std::find(files_.begin(), files_.end(), path) == files_.end()) {
    return absl::NotFoundError(common::StrCat("file '", name, "' was not created by this phase"));
  }
  const int fd = open(path.c_str(), O_CLOEXEC | flags);
  if (fd < 0) {
    const int err = errno;
    if (err == EINVAL && (flags & O_DIRECT)) {
      return absl::InvalidArgumentError(common::StrCat(
          "target '", config_.name, "': the filesystem under ", config_.path,
          " does not support O_DIRECT (direct: true)"));
    }
    return common::ErrnoError(common::StrCat("target '", config_.name, "': cannot open ", path),
                              err);
  }
  return fd;
}

int DirTarget::Cleanup() {
  int removed = 0;
  for (const auto& path : files_) {
    if (unlink(path.c_str()) == 0) ++removed;
  }
  files_.clear();
  if (dir_exists_ && rmdir(phase_dir_.c_str()) == 0) ++removed;
  dir_exists_ = false;
  return removed;
}

}  // namespace stormark::agent
