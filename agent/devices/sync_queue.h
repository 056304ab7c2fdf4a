// The psync engine: a queue that runs each request to completion with Device::Execute inside
// Submit, as fio's psync engine does. Completions wait in the queue until reaped. A depth
// above 1 only batches: requests never overlap, and DeviceCaps::async is false.
#ifndef STORMARK_AGENT_DEVICES_SYNC_QUEUE_H_
#define STORMARK_AGENT_DEVICES_SYNC_QUEUE_H_

#include <deque>

#include "agent/devices/device.h"

namespace stormark::agent {

class SyncQueue final : public IoQueue {
 public:
  // `device` must outlive the queue.
  SyncQueue(Device& device, uint32_t depth);

  uint32_t depth() const override { return depth_; }
  uint32_t in_flight() const override { return static_cast<uint32_t>(done_.size()); }
  common::Status Submit(std::span<const IoRequest> requests) override;
  common::StatusOr<size_t> Reap(size_t min_complete, std::span<IoCompletion> out,
                                int64_t timeout_nanos) override;

 private:
  Device& device_;
  const uint32_t depth_;
  std::deque<IoCompletion> done_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_SYNC_QUEUE_H_
