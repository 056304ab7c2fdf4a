#include "agent/dir/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "agent/dir/c_name.h"

namespace stormark::agent {
namespace {

// openat2 answers EAGAIN when a rename elsewhere on the filesystem raced its walk.
constexpr int kOpenat2Attempts = 16;

// Whether a walk may go onto another filesystem than the one it starts on.
enum class Mounts { kStay, kCross };

int Openat2(int dir_fd, std::string_view name, int flags, mode_t mode, Mounts mounts) {
  const CName path(name);
  open_how how{};
  how.flags = static_cast<uint64_t>(flags);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                (mounts == Mounts::kStay ? RESOLVE_NO_XDEV : 0);
  long fd = -1;
  for (int attempt = 0; attempt < kOpenat2Attempts; ++attempt) {
    fd = syscall(SYS_openat2, dir_fd, path.c_str(), &how, sizeof(how));
    if (fd >= 0 || errno != EAGAIN) break;
  }
  return static_cast<int>(fd);
}

// One component at a time, each opened with O_NOFOLLOW and, with kStay, checked for its
// filesystem.
int Walk(int dir_fd, std::string_view name, int flags, mode_t mode, Mounts mounts) {
  struct stat root;
  if (fstat(dir_fd, &root) != 0) return -1;
  int current = dir_fd;
  auto close_current = [&] {
    if (current != dir_fd) close(current);
  };
  for (;;) {
    const size_t slash = name.find('/');
    const std::string component(name.substr(0, slash));
    if (component.empty() || component == "." || component == "..") {
      close_current();
      errno = EXDEV;
      return -1;
    }
    const bool last = slash == std::string_view::npos;
    const int next =
        last ? openat(current, component.c_str(), flags, mode)
             : openat(current, component.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int err = errno;
    close_current();
    if (next < 0) {
      errno = err;
      return -1;
    }
    struct stat st;
    if (fstat(next, &st) != 0 || (mounts == Mounts::kStay && st.st_dev != root.st_dev)) {
      close(next);
      errno = EXDEV;
      return -1;
    }
    if (last) return next;
    current = next;
    name.remove_prefix(slash + 1);
  }
}

int Open(int dir_fd, std::string_view name, int flags, mode_t mode, Resolver resolver,
         Mounts mounts) {
  flags |= O_CLOEXEC | O_NOFOLLOW;
  if (name.empty() || name.front() == '/') {
    errno = EXDEV;
    return -1;
  }
  if (resolver == Resolver::kOpenat2) {
    const int fd = Openat2(dir_fd, name, flags, mode, mounts);
    if (fd >= 0 || (errno != ENOSYS && errno != E2BIG)) return fd;
  }
  return Walk(dir_fd, name, flags, mode, mounts);
}

}  // namespace

int OpenBeneath(int dir_fd, std::string_view name, int flags, mode_t mode, Resolver resolver) {
  return Open(dir_fd, name, flags, mode, resolver, Mounts::kStay);
}

int OpenFromRootNoSymlinks(std::string_view path, int flags, Resolver resolver) {
  if (!path.starts_with('/')) {
    errno = EINVAL;
    return -1;
  }
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  path.remove_prefix(1);
  if (path.empty()) return open("/", flags | O_CLOEXEC);
  const int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return -1;
  const int fd = Open(root, path, flags, 0, resolver, Mounts::kCross);
  const int err = errno;
  close(root);
  errno = err;
  return fd;
}

}  // namespace stormark::agent
