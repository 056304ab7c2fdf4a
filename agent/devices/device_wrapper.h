// A device that forwards every call to another one, as leveldb's EnvWrapper does: a subclass
// overrides only the calls it cares about (see fault_device.h).
//
// OpenQueue is deliberately not forwarded: the wrapper's queue runs requests through the
// wrapper's own Execute (the psync engine), so that an override sees every request.
#ifndef STORMARK_AGENT_DEVICES_DEVICE_WRAPPER_H_
#define STORMARK_AGENT_DEVICES_DEVICE_WRAPPER_H_

#include "agent/devices/device.h"

namespace stormark::agent {

class DeviceWrapper : public Device {
 public:
  // `target` must outlive the wrapper.
  explicit DeviceWrapper(Device& target) : target_(target) {}

  Device& target() const { return target_; }

  uint64_t size() const override { return target_.size(); }
  uint32_t block_size() const override { return target_.block_size(); }
  DeviceCaps caps() const override {
    DeviceCaps caps = target_.caps();
    caps.async = false;  // Requests run through Execute, one at a time.
    return caps;
  }
  std::string Describe() const override { return target_.Describe(); }
  int64_t Execute(const IoRequest& request) override { return target_.Execute(request); }
  int64_t Discard(uint64_t offset, uint64_t length) override {
    return target_.Discard(offset, length);
  }
  common::Status RequestError(const IoRequest& request, int64_t result) const override {
    return target_.RequestError(request, result);
  }
  std::map<std::string, std::string> Stats() const override { return target_.Stats(); }
  int fd() const override { return target_.fd(); }
  common::Status Close() override { return target_.Close(); }

 private:
  Device& target_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_DEVICE_WRAPPER_H_
