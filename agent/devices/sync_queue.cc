#include "agent/devices/sync_queue.h"

#include <algorithm>

#include "common/strings.h"

namespace stormark::agent {

SyncQueue::SyncQueue(Device& device, uint32_t depth)
    : device_(device), depth_(std::max<uint32_t>(1, depth)) {}

common::Status SyncQueue::Submit(std::span<const IoRequest> requests) {
  if (done_.size() + requests.size() > depth_) {
    return absl::FailedPreconditionError(common::StrCat(
        "queue full: ", done_.size(), " in flight + ", requests.size(), " > depth ", depth_));
  }
  for (const IoRequest& request : requests) {
    done_.push_back({request.tag, device_.Execute(request)});
  }
  return absl::OkStatus();
}

common::StatusOr<size_t> SyncQueue::Reap(size_t min_complete, std::span<IoCompletion> out,
                                         int64_t timeout_nanos) {
  // Everything submitted has completed already, so there is never anything to wait for.
  const size_t n = std::min(out.size(), done_.size());
  for (size_t i = 0; i < n; ++i) {
    out[i] = done_.front();
    done_.pop_front();
  }
  return n;
}

}  // namespace stormark::agent
