#include "agent/devices/fault_device.h"

#include <algorithm>
#include <cerrno>
#include <optional>

namespace stormark::agent {
void FaultDevice::ArmWrite(uint64_t nth, Fault fault, uint64_t arg) {
  absl::MutexLock lock(&mu_);
  write_faults_.push_back({writes_ + nth, fault, arg});
}

void FaultDevice::ArmReadFailure(uint64_t nth) {
  absl::MutexLock lock(&mu_);
  read_faults_.push_back({reads_ + nth, Fault::kFail, 0});
}

std::vector<uint64_t> FaultDevice::fired() const {
  absl::MutexLock lock(&mu_);
  return fired_;
}

int64_t FaultDevice::Execute(const IoRequest& request) {
  if (request.op != IoOp::kRead && request.op != IoOp::kWrite) {
    return DeviceWrapper::Execute(request);
  }
  std::optional<Armed> hit;
  {
    absl::MutexLock lock(&mu_);
    const bool write = request.op == IoOp::kWrite;
    const uint64_t count = write ? ++writes_ : ++reads_;
    std::vector<Armed>& armed = write ? write_faults_ : read_faults_;
    for (auto it = armed.begin(); it != armed.end(); ++it) {
      if (it->at == count) {
        hit = *it;
        armed.erase(it);
        fired_.push_back(request.offset);
        break;
      }
    }
  }
  if (!hit) return DeviceWrapper::Execute(request);
  switch (hit->fault) {
    case Fault::kDrop:
      return request.length;
    case Fault::kMisdirect: {
      IoRequest moved = request;
      moved.offset = (request.offset + hit->arg) % size();
      const int64_t r = DeviceWrapper::Execute(moved);
      return r < 0 ? r : request.length;
    }
    case Fault::kTear: {
      IoRequest part = request;
      part.length = static_cast<uint32_t>(std::min<uint64_t>(hit->arg, request.length));
      const int64_t r = DeviceWrapper::Execute(part);
      return r < 0 ? r : request.length;
    }
    case Fault::kFail:
      return -EIO;
  }
  return -EIO;
}

}  // namespace stormark::agent
