#include "agent/dir/os_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/raw_io.h"

namespace stormark::agent {
namespace {

ssize_t Result(ssize_t r) { return r < 0 ? -errno : r; }

}  // namespace

ssize_t OsFile::Read(void* buf, size_t n) { return Result(common::RawRead(fd_, buf, n)); }
ssize_t OsFile::Write(const void* buf, size_t n) { return Result(common::RawWrite(fd_, buf, n)); }

ssize_t OsFile::ReadAt(void* buf, size_t n, uint64_t offset) {
  return Result(common::RawPread(fd_, buf, n, static_cast<off_t>(offset)));
}

ssize_t OsFile::WriteAt(const void* buf, size_t n, uint64_t offset) {
  return Result(common::RawPwrite(fd_, buf, n, static_cast<off_t>(offset)));
}

int64_t OsFile::Seek(int64_t offset, int whence) {
  const off_t r = ::lseek(fd_, static_cast<off_t>(offset), whence);
  return r < 0 ? -errno : r;
}

int OsFile::Sync() { return ::fsync(fd_) == 0 ? 0 : -errno; }
int OsFile::DataSync() { return ::fdatasync(fd_) == 0 ? 0 : -errno; }

int OsFile::Truncate(uint64_t size) {
  return ::ftruncate(fd_, static_cast<off_t>(size)) == 0 ? 0 : -errno;
}

int64_t OsFile::Size() {
  struct stat st;
  return ::fstat(fd_, &st) == 0 ? st.st_size : -errno;
}

int OsFile::Close() {
  if (fd_ < 0) return 0;
  const int fd = fd_;
  fd_ = -1;
  return ::close(fd) == 0 ? 0 : -errno;
}

std::FILE* OsFile::OpenStream(const char* mode) {
  if (fd_ < 0) {
    errno = EBADF;
    return nullptr;
  }
  std::FILE* stream = ::fdopen(fd_, mode);
  if (stream != nullptr) fd_ = -1;  // The stream owns the descriptor now.
  return stream;
}

int OsFile::ReleaseFd() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

}  // namespace stormark::agent
