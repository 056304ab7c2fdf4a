// trim: discards over a region of a block target, as fio's rw=trim and rw=randtrim. Each
// request discards bs bytes (BLKDISCARD on a block device, a punched hole in a file; see
// Device::Discard) and is timed on its own. With then_write (fio's trimwrite and
// randtrimwrite), each discard is followed by a write of the same block, timed apart, and the
// writes are flushed (fdatasync) before the timed region ends; the result then has a "trim"
// and a "write" measurement. The region's data is gone afterwards, so the target
// must be disposable and the write interlocks run (agent/devices/write_guard.h); the agent then
// forgets what earlier phases wrote there (WrittenPrefix::discarded), so a later read lays its
// data out again.
#ifndef STORMARK_AGENT_WORKLOADS_TRIM_TRIM_H_
#define STORMARK_AGENT_WORKLOADS_TRIM_TRIM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/config/config.h"
#include "agent/devices/device.h"
#include "agent/targets/block/block_target.h"
#include "agent/targets/target_kind.h"
#include "agent/workloads/workload.h"
#include "common/recorder.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

class TrimWorkload : public Workload {
 public:
  // On `target`, a block target as the phase resolved it (`block`, or null to resolve it in
  // Prepare).
  TrimWorkload(const stormark::v1::TrimSpec& spec, TargetConfig target,
               std::shared_ptr<BlockTarget> block);
  // On `device`, which the caller owns and keeps alive (tests).
  TrimWorkload(const stormark::v1::TrimSpec& spec, Device& device);
  ~TrimWorkload() override;

  common::Status Prepare(const std::atomic<bool>& cancelled,
                         std::vector<std::string>* warnings) override;
  common::Status Run(RunContext& ctx) override;
  // Nothing to remove: the device is used in place.
  CleanupReport Cleanup() override { return {}; }
  void AddToResult(stormark::v1::PhaseResult* result) const override;
  WrittenPrefix WrittenFromStart() const override;

  // The offsets of the requests, in the order they are made: [offset, offset + size) in steps
  // of bs, shuffled when random. Exposed for tests.
  static std::vector<uint64_t> RequestOffsets(const stormark::v1::TrimSpec& spec,
                                              uint64_t region_bytes);

 private:
  const stormark::v1::TrimSpec spec_;
  const TargetConfig target_;
  std::shared_ptr<BlockTarget> block_;
  std::unique_ptr<Device> owned_device_;
  Device* device_ = nullptr;
  uint64_t bs_ = 0;
  uint64_t region_bytes_ = 0;           // From offset; set by Prepare.
  std::vector<uint64_t> offsets_;       // The random order; empty in address order.
  std::atomic<uint64_t> discarded_{0};  // Bytes discarded by Run so far.
  std::atomic<bool> touched_{false};    // Run asked for a discard.
  // With then_write: the two directions' recorders (owned by the run's RecorderSet).
  const common::Recorder* trims_ = nullptr;
  const common::Recorder* writes_ = nullptr;
  int64_t series_interval_nanos_ = 1'000'000'000;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_TRIM_TRIM_H_
