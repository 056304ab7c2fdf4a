#include "agent/dir/os_file.h"

#include <stdio_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "agent/dir/file_stream.h"
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
  return common::RawClose(fd) == 0 ? 0 : -errno;
}

// A stream over this File's calls (fopencookie), not over the descriptor (fdopen): fdopen asks
// fcntl(F_GETFL) and the stream's first I/O asks fstat for a buffer size, two system calls per
// file that PostMark, which fopens its files, does not make (and whose fstat the phase's own
// check has already made). The buffer is the st_blksize glibc's file streams would use, and the
// stream takes no lock: one thread uses it. Reads and writes then go through Read and Write,
// which make the system calls directly (common/raw_io.h).
std::FILE* OsFile::OpenStream(const char* mode) {
  if (fd_ < 0) {
    errno = EBADF;
    return nullptr;
  }
  // As fopen's and fdopen's append mode: the stream starts at the end.
  if (mode[0] == 'a') {
    if (const int64_t r = Seek(0, SEEK_END); r < 0) {
      errno = static_cast<int>(-r);
      return nullptr;
    }
  }
  std::FILE* stream = OpenFileStream(this, mode);
  if (stream == nullptr) return nullptr;
  stream_buf_ = std::make_unique<char[]>(stream_buffer_);
  if (setvbuf(stream, stream_buf_.get(), _IOFBF, stream_buffer_) != 0) {
    fclose(stream);
    errno = ENOMEM;
    return nullptr;
  }
  __fsetlocking(stream, FSETLOCKING_BYCALLER);
  return stream;
}

int OsFile::ReleaseFd() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

}  // namespace stormark::agent
