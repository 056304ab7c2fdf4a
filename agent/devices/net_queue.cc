#include "agent/devices/net_queue.h"

#include <time.h>

#include <algorithm>
#include <cerrno>

#include "common/strings.h"

namespace stormark::agent {
namespace {

// The longest single wait: how soon a cancelled phase or the request timeout is noticed.
constexpr int kSliceMs = 100;

bool IsFlush(const IoRequest& request) {
  return request.op == IoOp::kFsync || request.op == IoOp::kFdatasync;
}

}  // namespace

int64_t NetNowNanos() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::map<std::string, std::string> NetStats::ToMap(std::string_view prefix) const {
  return {{common::StrCat(prefix, ".connections"), common::StrCat(connections.load())},
          {common::StrCat(prefix, ".failed_requests"), common::StrCat(failed_requests.load())},
          {common::StrCat(prefix, ".lost_connections"), common::StrCat(lost_connections.load())},
          {common::StrCat(prefix, ".timeouts"), common::StrCat(timeouts.load())}};
}

NetQueue::NetQueue(std::unique_ptr<NetConnection> connection, uint32_t depth, NetOptions options,
                   std::string what, NetStats& stats)
    : connection_(std::move(connection)),
      depth_(std::max<uint32_t>(1, depth)),
      options_(options),
      what_(std::move(what)),
      stats_(stats) {}

common::Status NetQueue::Submit(std::span<const IoRequest> requests) {
  if (!error_.ok()) return error_;
  if (in_flight() + requests.size() > depth_) {
    return absl::FailedPreconditionError(common::StrCat(
        "queue full: ", in_flight(), " in flight + ", requests.size(), " > depth ", depth_));
  }
  held_.insert(held_.end(), requests.begin(), requests.end());
  return Pump();
}

common::Status NetQueue::Pump() {
  while (!held_.empty() && !flush_started_) {
    const IoRequest& next = held_.front();
    if (IsFlush(next) && started_ > 0) break;  // Drain first.
    if (started_ == 0) last_progress_ = NetNowNanos();
    common::Status status = connection_->Start(next);
    if (!status.ok()) {
      stats_.lost_connections.fetch_add(1);
      error_ = status;
      return status;
    }
    if (IsFlush(next)) {
      flush_started_ = true;
      flush_tag_ = next.tag;
    }
    ++started_;
    held_.pop_front();
  }
  return absl::OkStatus();
}

common::Status NetQueue::ServiceOnce(int timeout_ms) {
  batch_.clear();
  common::Status status = connection_->Service(timeout_ms, &batch_);
  if (!batch_.empty()) last_progress_ = NetNowNanos();
  for (const IoCompletion& c : batch_) {
    --started_;
    if (flush_started_ && c.tag == flush_tag_) flush_started_ = false;
    if (c.result < 0) stats_.failed_requests.fetch_add(1);
    done_.push_back(c);
  }
  if (!status.ok()) {
    stats_.lost_connections.fetch_add(1);
    error_ = status;
    return status;
  }
  if (started_ > 0 && NetNowNanos() - last_progress_ > options_.timeout_nanos) {
    stats_.timeouts.fetch_add(1);
    error_ = absl::DeadlineExceededError(
        common::StrCat(what_, " sent no reply for ", options_.timeout_nanos / 1'000'000'000,
                       " s with ", started_, " request(s) in flight"));
    return error_;
  }
  return Pump();
}

common::StatusOr<size_t> NetQueue::Reap(size_t min_complete, std::span<IoCompletion> out,
                                        int64_t timeout_nanos) {
  min_complete = std::min<size_t>({min_complete, in_flight(), out.size()});
  const int64_t deadline = timeout_nanos >= 0 ? NetNowNanos() + timeout_nanos : -1;
  if (min_complete == 0 && done_.empty() && started_ > 0 && error_.ok()) {
    RETURN_IF_ERROR(ServiceOnce(0));  // Whatever is ready, without waiting.
  }
  while (done_.size() < min_complete) {
    if (!error_.ok()) return error_;
    if (options_.cancelled != nullptr && options_.cancelled->load(std::memory_order_relaxed)) {
      break;  // The caller sees the flag and stops.
    }
    int slice = kSliceMs;
    bool last = false;  // The caller's timeout has passed: one look without waiting, then go.
    if (deadline >= 0) {
      const int64_t left = std::max<int64_t>(0, deadline - NetNowNanos());
      last = left == 0;
      slice = static_cast<int>(std::min<int64_t>(slice, (left + 999'999) / 1'000'000));
    }
    RETURN_IF_ERROR(ServiceOnce(slice));
    if (last) break;
  }
  size_t n = 0;
  while (n < out.size() && !done_.empty()) {
    out[n++] = done_.front();
    done_.pop_front();
  }
  return n;
}

int64_t ExecuteOnConnection(NetConnection& connection, const IoRequest& request,
                            const NetOptions& options, NetStats& stats, bool* lost) {
  *lost = false;
  if (!connection.Start(request).ok()) {
    stats.lost_connections.fetch_add(1);
    *lost = true;
    return -ECONNRESET;
  }
  std::vector<IoCompletion> done;
  const int64_t start = NetNowNanos();
  while (done.empty()) {
    if (options.cancelled != nullptr && options.cancelled->load(std::memory_order_relaxed)) {
      *lost = true;  // The request is still in flight: only dropping the connection ends it.
      return -ECANCELED;
    }
    if (!connection.Service(kSliceMs, &done).ok()) {
      stats.lost_connections.fetch_add(1);
      *lost = true;
      return -ECONNRESET;
    }
    if (done.empty() && NetNowNanos() - start > options.timeout_nanos) {
      stats.timeouts.fetch_add(1);
      *lost = true;
      return -ETIMEDOUT;
    }
  }
  if (done.front().result < 0) stats.failed_requests.fetch_add(1);
  return done.front().result;
}

}  // namespace stormark::agent
