// A buffer aligned for O_DIRECT (4 KiB), freed when it goes out of scope. Movable.
//
// From 256 KiB on, the buffer is aligned to 2 MiB and asks for transparent huge pages: a
// request whose pages are scattered in physical memory needs a segment per 4 KiB page, and a
// device that takes fewer segments (virtio-blk: 254) splits a 1 MiB request in two. Whether
// that happens would otherwise depend on how fragmented the host's memory happens to be.
// common::IoBufferBytes(size) is what such a buffer takes; the memory estimates count it.
//
// Allocation never throws: a buffer the host cannot give is RESOURCE_EXHAUSTED, and the
// phase that asked for it fails instead of the agent.
#ifndef STORMARK_AGENT_DEVICES_IO_BUFFER_H_
#define STORMARK_AGENT_DEVICES_IO_BUFFER_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <utility>

#include "common/memory_estimate.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::agent {

class IoBuffer {
 public:
  // A buffer of `size` bytes (its contents undefined), or RESOURCE_EXHAUSTED naming the size.
  static common::StatusOr<IoBuffer> Allocate(size_t size) {
    const bool huge = size >= common::kIoBufferHugeFrom;
    const size_t alignment = huge ? common::kIoBufferHugePage : common::kIoBufferAlignment;
    const size_t bytes = common::IoBufferBytes(size);
    void* p = nullptr;
    if (posix_memalign(&p, alignment, bytes) != 0) {
      return absl::ResourceExhaustedError(common::StrCat(
          "out of memory: cannot allocate an I/O buffer of ", common::FormatBytes(size)));
    }
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);  // A hint; without it, small pages.
    return IoBuffer(static_cast<char*>(p), size);
  }

  ~IoBuffer() { free(data_); }
  IoBuffer(const IoBuffer&) = delete;
  IoBuffer& operator=(const IoBuffer&) = delete;
  IoBuffer(IoBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  IoBuffer& operator=(IoBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }

  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  IoBuffer(char* data, size_t size) : data_(data), size_(size) {}

  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_IO_BUFFER_H_
