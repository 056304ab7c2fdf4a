// A device in memory, for tests: workloads run against it without disks or root, and a test
// can look at exactly what was written. Requests are serialised by one mutex.
#ifndef STORMARK_AGENT_DEVICES_MEMORY_DEVICE_H_
#define STORMARK_AGENT_DEVICES_MEMORY_DEVICE_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/devices/device.h"

namespace stormark::agent {

class MemoryDevice final : public Device {
 public:
  // `size` zero bytes. `alignment` is what caps() declares (and Execute enforces with
  // -EINVAL), to exercise direct-I/O rules.
  explicit MemoryDevice(uint64_t size, uint32_t alignment = 1);

  uint64_t size() const override { return size_; }
  uint32_t block_size() const override { return 512; }
  DeviceCaps caps() const override;
  std::string Describe() const override { return "memory device"; }
  int64_t Execute(const IoRequest& request) override;
  // Zeroes the range, as a discard that reads back as zeros.
  int64_t Discard(uint64_t offset, uint64_t length) override;

  // A copy of `n` bytes at `offset`, for assertions. Thread-safe.
  std::string Contents(uint64_t offset, size_t n) const;
  // Requests executed so far, by kind. Thread-safe.
  uint64_t reads() const;
  uint64_t writes() const;
  uint64_t flushes() const;
  uint64_t discards() const;

 private:
  const uint32_t alignment_;
  const uint64_t size_;  // data_.size(), which never changes.
  mutable absl::Mutex mu_;
  std::vector<char> data_ ABSL_GUARDED_BY(mu_);
  uint64_t reads_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t flushes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t discards_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_MEMORY_DEVICE_H_
