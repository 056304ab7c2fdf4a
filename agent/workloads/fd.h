// A file descriptor that closes itself, shared by the workloads.
#ifndef STORMARK_AGENT_WORKLOADS_FD_H_
#define STORMARK_AGENT_WORKLOADS_FD_H_

#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "common/status.h"

namespace stormark::agent {

// Owns a descriptor (or -1) and closes it when it goes out of scope. Movable, not copyable.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(other.Release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) close(fd_);
      fd_ = other.Release();
    }
    return *this;
  }

  int get() const { return fd_; }
  // Gives up ownership without closing.
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes now and reports the error, which for a write can be the first sign of a lost write.
  common::Status Close(std::string_view what) {
    const int fd = Release();
    if (fd >= 0 && close(fd) != 0) return common::ErrnoError(what, errno);
    return absl::OkStatus();
  }

 private:
  int fd_ = -1;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_FD_H_
