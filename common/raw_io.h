// read(2), write(2), pread(2), pwrite(2) and close(2) without glibc's cancellation wrappers.
//
// These are cancellation points. In a process with more than one thread, glibc brackets
// each call with __pthread_enable_asynccancel and __pthread_disable_asynccancel, atomic
// operations on the calling thread's cancel state; a single-threaded program skips them. On
// the development VM that bracket cost about 40 ns a call: bonnie++ 2.00's per-character
// tests (one write(2) or read(2) per byte to the page cache) ran 15-20% slower in the agent,
// which has gRPC's threads, than in bonnie++, which has none (perf: 9.4% of the agent's time
// in __pthread_disable_asynccancel). The agent never cancels a thread, so its I/O paths make
// the system calls directly and measure the storage, not glibc's bookkeeping. Same results
// as the wrappers: the count, or -1 with errno set.
#ifndef STORMARK_COMMON_RAW_IO_H_
#define STORMARK_COMMON_RAW_IO_H_

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace stormark::common {

// pread64 and pwrite64 take the offset in one register only where a long holds it.
static_assert(sizeof(long) == sizeof(int64_t), "raw_io.h assumes a 64-bit ABI");

inline ssize_t RawRead(int fd, void* buf, size_t n) { return syscall(SYS_read, fd, buf, n); }

inline ssize_t RawWrite(int fd, const void* buf, size_t n) {
  return syscall(SYS_write, fd, buf, n);
}

inline ssize_t RawPread(int fd, void* buf, size_t n, off_t offset) {
  return syscall(SYS_pread64, fd, buf, n, offset);
}

inline ssize_t RawPwrite(int fd, const void* buf, size_t n, off_t offset) {
  return syscall(SYS_pwrite64, fd, buf, n, offset);
}

// close(2) is a cancellation point too.
inline int RawClose(int fd) { return static_cast<int>(syscall(SYS_close, fd)); }

}  // namespace stormark::common

#endif  // STORMARK_COMMON_RAW_IO_H_
