// A buffer aligned for O_DIRECT (4 KiB), freed when it goes out of scope. Movable.
#ifndef STORMARK_AGENT_DEVICES_IO_BUFFER_H_
#define STORMARK_AGENT_DEVICES_IO_BUFFER_H_

#include <cstddef>
#include <cstdlib>
#include <new>

namespace stormark::agent {

class IoBuffer {
 public:
  // Throws std::bad_alloc, as new does, when memory runs out.
  explicit IoBuffer(size_t size) : size_(size) {
    void* p = nullptr;
    if (posix_memalign(&p, kAlignment, size == 0 ? kAlignment : size) != 0) {
      throw std::bad_alloc();
    }
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
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_IO_BUFFER_H_
