// A File over an operating system descriptor: each call is the system call.
#ifndef STORMARK_AGENT_DIR_OS_FILE_H_
#define STORMARK_AGENT_DIR_OS_FILE_H_

#include <cstdio>
#include <memory>

#include "agent/dir/dir.h"

namespace stormark::agent {

class OsFile final : public File {
 public:
  // Takes ownership of `fd`. `stream_buffer` is the size of an OpenStream's buffer: the
  // filesystem's st_blksize, which glibc's own file streams use.
  explicit OsFile(int fd, size_t stream_buffer = BUFSIZ)
      : fd_(fd), stream_buffer_(stream_buffer > 0 ? stream_buffer : BUFSIZ) {}
  ~OsFile() override { Close(); }
  OsFile(const OsFile&) = delete;
  OsFile& operator=(const OsFile&) = delete;

  ssize_t Read(void* buf, size_t n) override;
  ssize_t Write(const void* buf, size_t n) override;
  ssize_t ReadAt(void* buf, size_t n, uint64_t offset) override;
  ssize_t WriteAt(const void* buf, size_t n, uint64_t offset) override;
  int64_t Seek(int64_t offset, int whence) override;
  int Sync() override;
  int DataSync() override;
  int Truncate(uint64_t size) override;
  int64_t Size() override;
  int Close() override;
  std::FILE* OpenStream(const char* mode) override;
  int fd() const override { return fd_; }
  int ReleaseFd() override;

 private:
  int fd_;
  const size_t stream_buffer_;
  std::unique_ptr<char[]> stream_buf_;  // OpenStream's buffer, which outlives the stream.
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_OS_FILE_H_
