// A device that misbehaves on purpose, for tests of the verifier and of error handling, in
// the manner of leveldb's FaultInjectionTestEnv. Faults are armed for the Nth write (or read)
// from now and fire once:
//   kDrop       the write reports success but nothing reaches the device (a lost write)
//   kMisdirect  the data lands at offset + `arg` (modulo the size) instead (misdirected)
//   kTear       only the first `arg` bytes are written, though success is reported (torn)
//   kFail       the request fails with -EIO
// Thread-safe.
#ifndef STORMARK_AGENT_DEVICES_FAULT_DEVICE_H_
#define STORMARK_AGENT_DEVICES_FAULT_DEVICE_H_

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/devices/device_wrapper.h"

namespace stormark::agent {

enum class Fault { kDrop, kMisdirect, kTear, kFail };

class FaultDevice final : public DeviceWrapper {
 public:
  explicit FaultDevice(Device& target) : DeviceWrapper(target) {}

  // The `nth` write from now (1 = the next one) suffers `fault`; see above for `arg`.
  void ArmWrite(uint64_t nth, Fault fault, uint64_t arg = 0);
  // The `nth` read from now fails with -EIO.
  void ArmReadFailure(uint64_t nth);

  // Faults that have fired: the offset each hit, in order.
  std::vector<uint64_t> fired() const;

  int64_t Execute(const IoRequest& request) override;

 private:
  struct Armed {
    uint64_t at = 0;  // The write or read count at which it fires.
    Fault fault = Fault::kFail;
    uint64_t arg = 0;
  };

  mutable absl::Mutex mu_;
  uint64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t reads_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Armed> write_faults_ ABSL_GUARDED_BY(mu_);
  std::vector<Armed> read_faults_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> fired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_FAULT_DEVICE_H_
