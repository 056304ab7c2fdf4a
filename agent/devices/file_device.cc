#include "agent/devices/file_device.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "agent/devices/aio_queue.h"
#include "agent/devices/sync_queue.h"
#include "agent/devices/uring_queue.h"
#include "common/raw_io.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::agent {
namespace {

constexpr uint32_t kFileDirectAlignment = 4096;

}  // namespace

const char* EngineName(Engine engine) {
  switch (engine) {
    case Engine::kIoUring:
      return "io_uring";
    case Engine::kLibaio:
      return "libaio";
    case Engine::kPsync:
      break;
  }
  return "psync";
}

common::StatusOr<Engine> ParseEngine(std::string_view name) {
  if (name == "psync") return Engine::kPsync;
  if (name == "io_uring") return Engine::kIoUring;
  if (name == "libaio") return Engine::kLibaio;
  return absl::InvalidArgumentError(
      common::StrCat("bad engine '", name, "': use psync, io_uring or libaio"));
}

common::StatusOr<std::unique_ptr<FileDevice>> FileDevice::Open(const std::string& path,
                                                               const FileDeviceOptions& options) {
  int flags = (options.writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | (options.direct ? O_DIRECT : 0);
  struct stat before;
  if (options.exclusive && stat(path.c_str(), &before) == 0 && S_ISBLK(before.st_mode)) {
    flags |= O_EXCL;
  }
  const int fd = open(path.c_str(), flags);
  if (fd < 0) {
    const int err = errno;
    if (err == EBUSY && (flags & O_EXCL)) {
      return absl::FailedPreconditionError(common::StrCat(
          path, " is in use (mounted, or held open exclusively by another program)"));
    }
    if (err == EINVAL && options.direct) {
      return absl::InvalidArgumentError(
          common::StrCat(path, ": the filesystem does not support O_DIRECT (direct: true)"));
    }
    return common::ErrnoError(common::StrCat("cannot open ", path), err);
  }
  return Adopt(fd, path, options);
}

common::StatusOr<std::unique_ptr<FileDevice>> FileDevice::Adopt(int fd, std::string path,
                                                                const FileDeviceOptions& options) {
  auto fail = [fd](common::Status status) {
    close(fd);
    return status;
  };
  struct stat st;
  if (fstat(fd, &st) != 0) return fail(common::ErrnoError(common::StrCat("stat ", path), errno));
  uint64_t available = 0;
  uint32_t block_size = 0;
  const bool block = S_ISBLK(st.st_mode);
  if (block) {
    if (ioctl(fd, BLKGETSIZE64, &available) != 0) {
      return fail(common::ErrnoError(common::StrCat("size of ", path), errno));
    }
    int logical = 0;
    if (ioctl(fd, BLKSSZGET, &logical) != 0 || logical <= 0) logical = 512;
    block_size = static_cast<uint32_t>(logical);
  } else if (S_ISREG(st.st_mode)) {
    available = static_cast<uint64_t>(st.st_size);
    block_size = options.direct ? kFileDirectAlignment
                                : static_cast<uint32_t>(st.st_blksize > 0 ? st.st_blksize : 4096);
  } else {
    return fail(absl::InvalidArgumentError(
        common::StrCat(path, " is neither a regular file nor a block device")));
  }
  const uint64_t size = options.size == 0 ? available : options.size;
  if (size > available && !(options.extend && !block)) {
    return fail(
        absl::OutOfRangeError(common::StrCat(path, " holds ", common::FormatBytes(available), "; ",
                                             common::FormatBytes(size), " were asked for")));
  }
  if (size == 0) return fail(absl::InvalidArgumentError(common::StrCat(path, " is empty")));
  return std::unique_ptr<FileDevice>(
      new FileDevice(std::move(path), fd, options, size, block_size, block));
}

FileDevice::FileDevice(std::string path, int fd, FileDeviceOptions options, uint64_t size,
                       uint32_t block_size, bool is_block_device)
    : path_(std::move(path)),
      fd_(fd),
      options_(options),
      size_(size),
      block_size_(block_size),
      is_block_device_(is_block_device) {}

FileDevice::~FileDevice() {
  if (fd_ >= 0) close(fd_);
}

common::Status FileDevice::Close() {
  if (fd_ < 0) return absl::OkStatus();
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) return common::ErrnoError(common::StrCat("close ", path_), errno);
  return absl::OkStatus();
}

DeviceCaps FileDevice::caps() const {
  DeviceCaps caps;
  caps.writable = options_.writable;
  caps.direct = options_.direct;
  caps.alignment = options_.direct ? std::max(block_size_, is_block_device_ ? 1u : 4096u) : 1;
  caps.async = options_.engine != Engine::kPsync;
  caps.discard = options_.writable;
  caps.file_backed = true;
  return caps;
}

int64_t FileDevice::Discard(uint64_t offset, uint64_t length) {
  if (!options_.writable) return -EBADF;
  if (offset > size_ || length > size_ - offset) return -EINVAL;
  if (is_block_device_) {
    uint64_t range[2] = {offset, length};
    return ioctl(fd_, BLKDISCARD, &range) == 0 ? 0 : -errno;
  }
  return fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                   static_cast<off_t>(length)) == 0
             ? 0
             : -errno;
}

std::string FileDevice::Describe() const {
  return common::StrCat(path_, " (", EngineName(options_.engine), options_.direct ? ", direct" : "",
                        ")");
}

int64_t FileDevice::Execute(const IoRequest& request) {
  switch (request.op) {
    case IoOp::kFsync:
      return fsync(fd_) == 0 ? 0 : -errno;
    case IoOp::kFdatasync:
      return fdatasync(fd_) == 0 ? 0 : -errno;
    case IoOp::kRead:
    case IoOp::kWrite:
      break;
  }
  const bool write = request.op == IoOp::kWrite;
  if (write && !options_.writable) return -EBADF;
  size_t done = 0;
  while (done < request.length) {
    const off_t at = static_cast<off_t>(request.offset + done);
    const ssize_t r = write
                          ? common::RawPwrite(fd_, request.buffer + done, request.length - done, at)
                          : common::RawPread(fd_, request.buffer + done, request.length - done, at);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -errno;
    if (r == 0) break;  // End of file or device.
    done += static_cast<size_t>(r);
  }
  return static_cast<int64_t>(done);
}

common::StatusOr<std::unique_ptr<IoQueue>> FileDevice::OpenQueue(uint32_t depth) {
  if (options_.engine == Engine::kPsync) {
    return std::unique_ptr<IoQueue>(new SyncQueue(*this, depth));
  }
  if (options_.engine == Engine::kLibaio) {
    ASSIGN_OR_RETURN(auto queue, AioQueue::Create(fd_, depth));
    return std::unique_ptr<IoQueue>(std::move(queue));
  }
  ASSIGN_OR_RETURN(auto queue, UringQueue::Create(fd_, depth));
  return std::unique_ptr<IoQueue>(std::move(queue));
}

}  // namespace stormark::agent
