// A buffer aligned for O_DIRECT (4 KiB), freed when it goes out of scope. Movable.
//
// From 256 KiB on, the buffer is aligned to 2 MiB and asks for transparent huge pages: a
// request whose pages are scattered in physical memory needs a segment per 4 KiB page, and a
// device that takes fewer segments (virtio-blk: 254) splits a 1 MiB request in two. Whether
// that happens would otherwise depend on how fragmented the host's memory happens to be.
#ifndef STORMARK_AGENT_DEVICES_IO_BUFFER_H_
#define STORMARK_AGENT_DEVICES_IO_BUFFER_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace stormark::agent {

class IoBuffer {
 public:
  // Throws std::bad_alloc, as new does, when memory runs out.
  explicit IoBuffer(size_t size) : size_(size) {
    const bool huge = size >= kHugeFrom;
    const size_t alignment = huge ? kHugePage : kAlignment;
    const size_t bytes = huge ? (size + kHugePage - 1) / kHugePage * kHugePage
                              : (size == 0 ? kAlignment : size);
    void* p = nullptr;
    if (posix_memalign(&p, alignment, bytes) != 0) throw std::bad_alloc();
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);  // A hint; without it, small pages.
    data_ = static_cast<char*>(p);
  }
  ~IoBuffer() { free(data_); }
  IoBuffer(const IoBuffer&) = delete;
  IoBuffer& operator=(const IoBuffer&) = delete;
  IoBuffer(IoBuffer&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
  }
  IoBuffer& operator=(IoBuffer&&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kAlignment = 4096;
  static constexpr size_t kHugeFrom = 256 * 1024;
  static constexpr size_t kHugePage = 2 * 1024 * 1024;
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_IO_BUFFER_H_
