// Block-queue settings of a target's device (the built-in knobs of a plan): the I/O
// scheduler, read_ahead_kb, nr_requests and, for SCSI disks, queue_depth. Each is written
// to sysfs before a phase and put back as it was afterwards, so a sweep over read-ahead
// leaves the host as it found it.
//
// A partition's queue is its disk's: tuning /dev/sda1 changes /sys/class/block/sda/queue.
// Not thread-safe: owned by one phase.
#ifndef STORMARK_AGENT_HOST_TUNING_H_
#define STORMARK_AGENT_HOST_TUNING_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/spec_check.h"
#include "common/status.h"

namespace stormark::agent {

// The choice in force in a sysfs list such as a queue's scheduler file: "none [mq-deadline]
// kyber" -> "mq-deadline". A text without brackets is the value itself.
std::string CurrentSysfsChoice(const std::string& text);

// Whether block devices `a` and `b` ("/dev/vda1", "/dev/vda") share one queue, that of one
// whole disk; an error when either has no queue under `sys_class_block`.
common::StatusOr<bool> OnSameDisk(const std::string& a, const std::string& b,
                                  const std::string& sys_class_block = "/sys/class/block");

class DeviceTuning {
 public:
  // Applies `settings` to the queue of `device` ("/dev/vda1"). On any failure, what was
  // already changed is put back and the error names the device, the knob and the reason.
  // `sys_class_block` is /sys/class/block except in tests.
  static common::StatusOr<std::unique_ptr<DeviceTuning>> Apply(
      const std::string& device, const std::map<std::string, std::string>& settings,
      const std::string& sys_class_block = "/sys/class/block");
  // The same for the block device numbered `dev`, found as `sys_dev_block`/MAJ:MIN (whatever
  // path named it: a by-id link may lead elsewhere by now); `device` names it in messages.
  static common::StatusOr<std::unique_ptr<DeviceTuning>> ApplyToDevice(
      dev_t dev, const std::string& device, const std::map<std::string, std::string>& settings,
      const std::string& sys_dev_block = "/sys/dev/block");

  // Restores every setting.
  ~DeviceTuning();
  DeviceTuning(const DeviceTuning&) = delete;
  DeviceTuning& operator=(const DeviceTuning&) = delete;

  // "read_ahead_kb" -> the value in force, "read_ahead_kb.before" -> the value before.
  const std::map<std::string, std::string>& report() const { return report_; }

  // Puts every setting back as it was. Idempotent. Returns the first failure.
  common::Status Restore();

 private:
  DeviceTuning() = default;
  // Applies `settings` below `disk`, the sysfs directory of the whole disk.
  static common::StatusOr<std::unique_ptr<DeviceTuning>> ApplyIn(
      const std::string& disk, const std::string& device,
      const std::map<std::string, std::string>& settings);

  struct Change {
    std::string path;
    std::string before;
  };
  std::vector<Change> changes_;
  std::map<std::string, std::string> report_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_HOST_TUNING_H_
