#include "agent/dir/file_stream.h"

#include <cerrno>

namespace stormark::agent {
namespace {

// Each call answers as the cookie functions must: a count, or -1 with errno.
ssize_t CookieRead(void* cookie, char* buf, size_t n) {
  const ssize_t r = static_cast<File*>(cookie)->Read(buf, n);
  if (r >= 0) return r;
  errno = static_cast<int>(-r);
  return -1;
}

// Writes all of it, as glibc's own file streams do (a short write is retried); stdio takes a
// cookie's short write for an error.
ssize_t CookieWrite(void* cookie, const char* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = static_cast<File*>(cookie)->Write(buf + done, n - done);
    if (r == -EINTR) continue;
    if (r <= 0) {
      if (done > 0) return static_cast<ssize_t>(done);
      errno = r < 0 ? static_cast<int>(-r) : EIO;
      return -1;
    }
    done += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(done);
}

int CookieSeek(void* cookie, off64_t* offset, int whence) {
  const int64_t r = static_cast<File*>(cookie)->Seek(*offset, whence);
  if (r < 0) {
    errno = static_cast<int>(-r);
    return -1;
  }
  *offset = r;
  return 0;
}

int CookieClose(void* cookie) {
  const int r = static_cast<File*>(cookie)->Close();
  if (r == 0) return 0;
  errno = -r;
  return -1;
}

}  // namespace

std::FILE* OpenFileStream(File* file, const char* mode) {
  cookie_io_functions_t functions{};
  functions.read = CookieRead;
  functions.write = CookieWrite;
  functions.seek = CookieSeek;
  functions.close = CookieClose;
  return fopencookie(file, mode, functions);
}

}  // namespace stormark::agent
