#include "agent/dir/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace stormark::agent {
namespace {

// Deep trees are walked with one open descriptor per level; past this depth the rest stays.
constexpr int kMaxDepth = 256;

int RemoveContents(int dir_fd, dev_t device, int depth) {
  const int fd = dup(dir_fd);
  if (fd < 0) return 0;
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    close(fd);
    return 0;
  }
  std::vector<std::string> names;
  while (const dirent* entry = readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    names.emplace_back(entry->d_name);
  }
  closedir(dir);

  int removed = 0;
  for (const std::string& name : names) {
    struct stat st;
    if (fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      if (unlinkat(dir_fd, name.c_str(), 0) == 0) ++removed;
      continue;
    }
    if (st.st_dev != device || depth >= kMaxDepth) continue;  // A mount point: not ours.
    const int child = openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) continue;
    removed += RemoveContents(child, device, depth + 1);
    close(child);
    if (unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) == 0) ++removed;
  }
  return removed;
}

}  // namespace

int RemoveDirectoryContents(int dir_fd) {
  struct stat st;
  if (fstat(dir_fd, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
  return RemoveContents(dir_fd, st.st_dev, 0);
}

}  // namespace stormark::agent
