// Opening a name below a directory descriptor without ever leaving it: no symbolic link is
// followed in any component (nor a /proc magic link), ".." cannot climb above the
// directory, and no component is on another filesystem. This is openat2(2) with
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV where the
// kernel has it (5.6 and later), and a walk of one O_NOFOLLOW openat(2) per component, each
// checked with fstat for its filesystem, where it has not.
#ifndef STORMARK_AGENT_DIR_BENEATH_H_
#define STORMARK_AGENT_DIR_BENEATH_H_

#include <sys/types.h>

#include <string_view>

namespace stormark::agent {

enum class Resolver { kOpenat2, kWalk };

// Opens `name` ("a/b/c", relative, no empty components) below `dir_fd` with `flags` and
// `mode` as openat(2)'s (O_CLOEXEC and O_NOFOLLOW are added). Returns the descriptor, or -1
// with errno: ELOOP for a symbolic link, EXDEV for another filesystem or a name that would
// leave `dir_fd`. kWalk forces the fallback (for tests); kOpenat2 falls back by itself when
// the kernel lacks openat2.
int OpenBeneath(int dir_fd, std::string_view name, int flags, mode_t mode = 0,
                Resolver resolver = Resolver::kOpenat2);

// Opens the absolute `path` ("/srv/bench") from "/" with `flags` (O_CLOEXEC and O_NOFOLLOW
// added), following no symbolic link in any component, the last or one above it; unlike
// OpenBeneath it may cross mount points, as a configured path does. -1 with errno, ELOOP
// for a symbolic link anywhere on the path.
int OpenFromRootNoSymlinks(std::string_view path, int flags,
                           Resolver resolver = Resolver::kOpenat2);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_BENEATH_H_
