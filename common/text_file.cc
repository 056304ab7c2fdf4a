#include "common/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

StatusOr<std::string> ReadTextFile(const std::string& path, std::string_view what,
                                   size_t max_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ErrnoError(StrCat("cannot read ", what, " ", path), errno);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(StrCat(what, " ", path, " is not a regular file"));
  }
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return ErrnoError(StrCat("cannot read ", what, " ", path), err);
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      close(fd);
      return absl::InvalidArgumentError(
          StrCat(what, " ", path, " is over ", FormatBytes(max_bytes)));
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

}  // namespace stormark::common
