// The null device: every request completes at once and moves no data, as fio's null engine.
// It measures the cost of stormark's own loop (offsets, clocks, histograms, queue handling):
// the ceiling of what any real device can show through it.
#ifndef STORMARK_AGENT_DEVICES_NULL_DEVICE_H_
#define STORMARK_AGENT_DEVICES_NULL_DEVICE_H_

#include "agent/devices/device.h"

namespace stormark::agent {

class NullDevice final : public Device {
 public:
  // `size` bytes addressable; reads leave the buffer untouched.
  explicit NullDevice(uint64_t size) : size_(size) {}

  uint64_t size() const override { return size_; }
  uint32_t block_size() const override { return 512; }
  DeviceCaps caps() const override {
    return {.writable = true, .direct = false, .alignment = 1, .async = false};
  }
  std::string Describe() const override { return "null device"; }
  int64_t Execute(const IoRequest& request) override { return request.length; }

 private:
  const uint64_t size_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_NULL_DEVICE_H_
