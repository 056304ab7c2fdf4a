#include "agent/targets/dir_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "agent/targets/remove_tree.h"
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
      return absl::AlreadyExistsError(
          common::StrCat("target '", target.name, "': ", dir,
                         " already exists (left over from an earlier run? remove it by hand)"));
    }
    return common::ErrnoError(common::StrCat("target '", target.name, "': cannot create ", dir),
                              err);
  }
  return std::unique_ptr<DirTarget>(new DirTarget(target, std::move(dir)));
}

DirTarget::DirTarget(TargetConfig config, std::string phase_dir)
    : config_(std::move(config)), phase_dir_(std::move(phase_dir)) {}

DirTarget::~DirTarget() { Cleanup(); }

std::string DirTarget::PathOf(std::string_view name) const {
  return common::StrCat(phase_dir_, "/", name);
}

common::Status DirTarget::CheckName(std::string_view name) const {
  const size_t slash = name.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? name : name.substr(slash + 1);
  bool ok = IsValidName(base);
  if (ok && slash != std::string_view::npos) {
    // Every directory on the way was made by CreateDirectory, whose names were checked.
    ok = dirs_.count(std::string(name.substr(0, slash))) != 0;
  }
  if (!ok) return absl::InvalidArgumentError(common::StrCat("bad file name '", name, "'"));
  return absl::OkStatus();
}

common::Status DirTarget::OpenError(std::string_view what, std::string_view name, int flags,
                                    int err) const {
  if (err == EINVAL && (flags & O_DIRECT)) {
    return absl::InvalidArgumentError(common::StrCat("target '", config_.name,
                                                     "': the filesystem under ", config_.path,
                                                     " does not support O_DIRECT (direct: true)"));
  }
  return common::ErrnoError(
      common::StrCat("target '", config_.name, "': cannot ", what, " ", PathOf(name)), err);
}

common::StatusOr<int> DirTarget::CreateFile(std::string_view name, int flags) {
  RETURN_IF_ERROR(CheckName(name));
  const std::string path = PathOf(name);
  const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_CLOEXEC | flags, 0600);
  if (fd < 0) return OpenError("create", name, flags, errno);
  files_.emplace(name);
  return fd;
}

common::StatusOr<int> DirTarget::OpenFile(std::string_view name, int flags) const {
  if (files_.count(std::string(name)) == 0) {
    return absl::NotFoundError(common::StrCat("file '", name, "' was not created by this phase"));
  }
  const int fd = open(PathOf(name).c_str(), O_CLOEXEC | flags);
  if (fd < 0) return OpenError("open", name, flags, errno);
  return fd;
}

common::Status DirTarget::RemoveFile(std::string_view name) {
  auto it = files_.find(std::string(name));
  if (it == files_.end()) {
    return absl::NotFoundError(common::StrCat("file '", name, "' was not created by this phase"));
  }
  if (unlink(PathOf(name).c_str()) != 0) {
    const int err = errno;
    if (err == ENOENT) files_.erase(it);
    return OpenError("remove", name, 0, err);
  }
  files_.erase(it);
  return absl::OkStatus();
}

common::Status DirTarget::CreateDirectory(std::string_view name) {
  RETURN_IF_ERROR(CheckName(name));
  if (mkdir(PathOf(name).c_str(), 0700) != 0) return OpenError("create", name, 0, errno);
  dirs_.emplace(name);
  return absl::OkStatus();
}

common::StatusOr<int> DirTarget::OpenDirectory(std::string_view name) const {
  if (dirs_.count(std::string(name)) == 0) {
    return absl::NotFoundError(
        common::StrCat("directory '", name, "' was not created by this phase"));
  }
  const int fd = open(PathOf(name).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return OpenError("open", name, 0, errno);
  return fd;
}

common::Status DirTarget::RemoveDirectory(std::string_view name) {
  auto it = dirs_.find(std::string(name));
  if (it == dirs_.end()) {
    return absl::NotFoundError(
        common::StrCat("directory '", name, "' was not created by this phase"));
  }
  if (rmdir(PathOf(name).c_str()) != 0) {
    const int err = errno;
    if (err == ENOENT) dirs_.erase(it);
    return OpenError("remove", name, 0, err);
  }
  dirs_.erase(it);
  return absl::OkStatus();
}

int DirTarget::Cleanup() {
  int removed = 0;
  for (const auto& name : files_) {
    if (unlink(PathOf(name).c_str()) == 0) ++removed;
  }
  files_.clear();
  // A directory's name is longer than its parent's, so longest first empties children first.
  std::vector<std::string> dirs(dirs_.begin(), dirs_.end());
  std::sort(dirs.begin(), dirs.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const auto& name : dirs) {
    if (rmdir(PathOf(name).c_str()) == 0) ++removed;
  }
  dirs_.clear();
  if (dir_exists_ && adopt_contents_) {
    const int fd = open(phase_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      removed += RemoveDirectoryContents(fd);
      close(fd);
    }
  }
  if (dir_exists_ && rmdir(phase_dir_.c_str()) == 0) ++removed;
  dir_exists_ = false;
  return removed;
}

}  // namespace stormark::agent
