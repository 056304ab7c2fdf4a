#include "agent/devices/memory_device.h"

#include <cerrno>
#include <cstring>

namespace stormark::agent {

MemoryDevice::MemoryDevice(uint64_t size, uint32_t alignment)
    : alignment_(alignment == 0 ? 1 : alignment), size_(size), data_(size) {}

DeviceCaps MemoryDevice::caps() const {
  return {.writable = true,
          .direct = alignment_ > 1,
          .alignment = alignment_,
          .async = false,
          .discard = true};
}

int64_t MemoryDevice::Discard(uint64_t offset, uint64_t length) {
  absl::MutexLock lock(&mu_);
  if (offset > size_ || length > size_ - offset) return -EINVAL;
  std::memset(data_.data() + offset, 0, length);
  ++discards_;
  return 0;
}

int64_t MemoryDevice::Execute(const IoRequest& request) {
  absl::MutexLock lock(&mu_);
  if (request.op == IoOp::kFsync || request.op == IoOp::kFdatasync) {
    ++flushes_;
    return 0;
  }
  if (request.offset % alignment_ != 0 || request.length % alignment_ != 0 ||
      reinterpret_cast<uintptr_t>(request.buffer) % alignment_ != 0) {
    return -EINVAL;
  }
  if (request.offset >= data_.size()) return 0;
  const size_t n = std::min<uint64_t>(request.length, data_.size() - request.offset);
  if (request.op == IoOp::kWrite) {
    ++writes_;
    std::memcpy(data_.data() + request.offset, request.buffer, n);
  } else {
    ++reads_;
    std::memcpy(request.buffer, data_.data() + request.offset, n);
  }
  return static_cast<int64_t>(n);
}

std::string MemoryDevice::Contents(uint64_t offset, size_t n) const {
  absl::MutexLock lock(&mu_);
  if (offset >= data_.size()) return "";
  n = std::min<uint64_t>(n, data_.size() - offset);
  return std::string(data_.data() + offset, n);
}

uint64_t MemoryDevice::reads() const {
  absl::MutexLock lock(&mu_);
  return reads_;
}

uint64_t MemoryDevice::writes() const {
  absl::MutexLock lock(&mu_);
  return writes_;
}

uint64_t MemoryDevice::flushes() const {
  absl::MutexLock lock(&mu_);
  return flushes_;
}

uint64_t MemoryDevice::discards() const {
  absl::MutexLock lock(&mu_);
  return discards_;
}

}  // namespace stormark::agent
