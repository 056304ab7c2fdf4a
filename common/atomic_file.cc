#include "common/atomic_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <fstream>

#include "common/strings.h"

namespace stormark::common {
namespace {

// The process's umask, read without changing it (umask(2) would, for every thread at once).
mode_t CurrentUmask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Umask:"))
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  }
  return 022;
}

// Hands every piece of `produce` to `file`; the errno of the first failure, or 0.
int WriteAll(std::FILE* file, const std::function<void(const PieceFn&)>& produce) {
  int error = 0;
  produce([&](std::string_view piece) {
    if (error != 0) return;  // The first failure is the one reported.
    if (std::fwrite(piece.data(), 1, piece.size(), file) != piece.size())
      error = errno ? errno : EIO;
  });
  if (std::fclose(file) != 0 && error == 0) error = errno;
  return error;
}

// `path` names a device, a pipe or a socket (/dev/null, /dev/stdout, a shell's /dev/fd/63):
// a stream, written in place. Renaming a file over it would replace the node itself, for every
// program on the host (as root: /dev/null a regular file).
Status WriteInPlace(const std::string& path, const std::function<void(const PieceFn&)>& produce) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return ErrnoError(StrCat("cannot write ", path), errno);
  std::FILE* file = fdopen(fd, "w");
  if (file == nullptr) {
    const int error = errno;
    close(fd);
    return ErrnoError(StrCat("cannot write ", path), error);
  }
  if (const int error = WriteAll(file, produce); error != 0) {
    return ErrnoError(StrCat("cannot write ", path), error);
  }
  return absl::OkStatus();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  return WriteFileAtomically(path, [contents](const PieceFn& put) { put(contents); });
}

Status WriteFileAtomically(const std::string& path,
                           const std::function<void(const PieceFn&)>& produce) {
  struct stat st;
  const bool exists = stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(StrCat("cannot write ", path, ": it is a directory"));
  }
  if (exists && !S_ISREG(st.st_mode)) return WriteInPlace(path, produce);

  // A symbolic link to a file is followed, so that the link stays and the file it names is
  // replaced; one that names nothing is refused rather than guessed at.
  std::string target = path;
  struct stat link;
  if (lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    if (!exists) {
      return absl::InvalidArgumentError(
          StrCat("cannot write ", path, ": a symbolic link to a file that does not exist"));
    }
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved) == nullptr) {
      return ErrnoError(StrCat("cannot resolve ", path), errno);
    }
    target = resolved;
  }

  // A new name beside the file, created exclusively: never a file or a link that someone put at
  // a predictable name first (a fixed "PATH.tmp" was opened through whatever was there).
  std::string temp = target + ".tmp.XXXXXX";
  const int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoError(StrCat("cannot write ", target, ".tmp.*"), errno);
  // The mode the file had, or a new file's (mkostemp's is 0600).
  const mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~CurrentUmask());
  std::FILE* file = fchmod(fd, mode) == 0 ? fdopen(fd, "w") : nullptr;
  if (file == nullptr) {
    const int error = errno;
    close(fd);
    unlink(temp.c_str());
    return ErrnoError(StrCat("cannot write ", temp), error);
  }
  if (const int error = WriteAll(file, produce); error != 0) {
    unlink(temp.c_str());  // A failed report leaves nothing half-written behind.
    return ErrnoError(StrCat("cannot write ", temp), error);
  }
  if (rename(temp.c_str(), target.c_str()) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    return ErrnoError(StrCat("cannot rename ", temp, " to ", target), error);
  }
  return absl::OkStatus();
}

}  // namespace stormark::common
