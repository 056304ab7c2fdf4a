#include "agent/targets/dir/dir_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "agent/dir/beneath.h"
#include "agent/dir/os_dir.h"
#include "common/log_text.h"
#include "common/strings.h"

namespace stormark::agent {

common::StatusOr<Fd> OpenTargetDir(std::string_view name, const std::string& path) {
  const std::string on = common::StrCat("target '", name, "': ");
  // No symbolic link is followed anywhere on the path, so swapping a directory above the
  // target for a link cannot aim the phase elsewhere.
  Fd dir(OpenFromRootNoSymlinks(path, O_RDONLY | O_DIRECTORY));
  if (dir.get() >= 0) return dir;
  const int err = errno;
  struct stat st;
  if (err == ELOOP || err == ENOTDIR) {
    char resolved[PATH_MAX];
    const bool known = realpath(path.c_str(), resolved) != nullptr;
    const std::string instead =
        known ? common::StrCat(" (configure ", resolved, " instead)") : std::string();
    if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return absl::FailedPreconditionError(common::StrCat(
          on, path, " is a symbolic link; the agent does not follow one to a target", instead));
    }
    if (err == ELOOP) {
      return absl::FailedPreconditionError(
          common::StrCat(on, "a directory above ", path,
                         " is a symbolic link; the agent follows none to a target", instead));
    }
  }
  if (err == ENOTDIR) {
    return absl::FailedPreconditionError(common::StrCat(on, path, " is not a directory"));
  }
  return common::ErrnoError(common::StrCat(on, "cannot open ", path), err);
}

common::StatusOr<std::unique_ptr<Dir>> OpenPhaseDir(const TargetConfig& target,
                                                    std::string_view phase_id) {
  if (!IsValidName(phase_id)) {
    return absl::InvalidArgumentError(
        common::StrCat("bad phase id '", common::LogSafe(phase_id), "'"));
  }
  ASSIGN_OR_RETURN(Fd dir, OpenTargetDir(target.name, target.path));
  ASSIGN_OR_RETURN(std::unique_ptr<OsDir> phase,
                   OsDir::Create(target.name, target.path, std::move(dir), phase_id));
  return std::unique_ptr<Dir>(std::move(phase));
}

common::StatusOr<std::unique_ptr<FileDevice>> OpenFileDevice(Dir& dir, std::string_view name,
                                                             const FileDeviceOptions& options) {
  const int flags = (options.writable ? O_RDWR : O_RDONLY) | (options.direct ? O_DIRECT : 0);
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, dir.OpenFile(name, flags));
  const int fd = file->ReleaseFd();
  if (fd < 0) {
    return absl::FailedPreconditionError(common::StrCat("target '", dir.target_name(),
                                                        "': ", dir.Describe(name),
                                                        " has no descriptor to do block I/O on"));
  }
  return FileDevice::Adopt(fd, dir.Describe(name), options);
}

}  // namespace stormark::agent
