// The queue of the user-space network initiators (NBD, iSCSI): one connection per queue,
// driven by the queue's own thread, with bounded waits.
//
// A NetConnection is one session with the server (an NBD handle, an iSCSI login): it starts
// requests and, when serviced, hands back the ones that completed. NetQueue puts Device's
// IoQueue contract on top of it:
//   - a flush starts only when every earlier request of the queue has completed, and later
//     requests wait for the flush, as io_uring's IOSQE_IO_DRAIN (NBD and SCSI flushes cover
//     completed writes only);
//   - Reap waits in slices, so a lost or silent server and a cancelled phase end the wait:
//     a connection error fails Reap at once, and no progress for NetOptions::timeout_nanos
//     with requests in flight fails it with DEADLINE_EXCEEDED.
// ExecuteOnConnection gives the blocking Device::Execute the same bounds.
#ifndef STORMARK_AGENT_DEVICES_NET_QUEUE_H_
#define STORMARK_AGENT_DEVICES_NET_QUEUE_H_

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agent/devices/device.h"

namespace stormark::agent {

// One session with a server, used by one thread at a time.
class NetConnection {
 public:
  virtual ~NetConnection() = default;
  // Sends `request` (its buffer stays the caller's until it completes). An error means the
  // connection is unusable and the request was not started.
  virtual common::Status Start(const IoRequest& request) = 0;
  // Waits up to `timeout_ms` for progress, then appends the requests that completed to `done`
  // (result: bytes, or -errno). An error means the connection is lost: requests still in
  // flight will never complete. Destroying the connection ends every request in flight, so
  // their buffers are free afterwards.
  virtual common::Status Service(int timeout_ms, std::vector<IoCompletion>* done) = 0;
};

// Counters a device keeps over all its connections, shown in PhaseResult.device_stats.
struct NetStats {
  std::atomic<uint64_t> connections{0};  // sessions opened
  std::atomic<uint64_t> failed_requests{0};
  std::atomic<uint64_t> lost_connections{0};
  std::atomic<uint64_t> timeouts{0};

  // The counters under names that start with `prefix`: "nbd.timeouts".
  std::map<std::string, std::string> ToMap(std::string_view prefix) const;
};

struct NetOptions {
  // No completion for this long while requests are in flight fails the wait.
  int64_t timeout_nanos = 30'000'000'000;
  // Set when the phase is cancelled; waits end soon after. May be null. Must outlive the
  // device and its queues.
  const std::atomic<bool>* cancelled = nullptr;
};

class NetQueue final : public IoQueue {
 public:
  // `what` names the server in errors: "NBD server nbd://127.0.0.1:10809/x". `stats` must
  // outlive the queue.
  NetQueue(std::unique_ptr<NetConnection> connection, uint32_t depth, NetOptions options,
           std::string what, NetStats& stats);

  uint32_t depth() const override { return depth_; }
  uint32_t in_flight() const override {
    return started_ + static_cast<uint32_t>(held_.size() + done_.size());
  }
  common::Status Submit(std::span<const IoRequest> requests) override;
  common::StatusOr<size_t> Reap(size_t min_complete, std::span<IoCompletion> out,
                                int64_t timeout_nanos) override;

 private:
  // Starts held requests as far as the flush rule allows.
  common::Status Pump();
  // One bounded wait on the connection.
  common::Status ServiceOnce(int timeout_ms);

  std::unique_ptr<NetConnection> connection_;
  const uint32_t depth_;
  const NetOptions options_;
  const std::string what_;
  NetStats& stats_;
  uint32_t started_ = 0;
  bool flush_started_ = false;  // A draining flush is in flight; later requests wait.
  uint64_t flush_tag_ = 0;
  std::deque<IoRequest> held_;
  std::deque<IoCompletion> done_;
  std::vector<IoCompletion> batch_;
  int64_t last_progress_ = 0;
  common::Status error_;  // Once the connection is lost, every later call fails with it.
};

// Runs one request to completion on `connection` with the bounds of NetQueue; returns bytes or
// -errno (-ECONNRESET for a lost connection, -ETIMEDOUT, -ECANCELED) and, for those three, sets
// `*lost` so that the caller drops the connection.
int64_t ExecuteOnConnection(NetConnection& connection, const IoRequest& request,
                            const NetOptions& options, NetStats& stats, bool* lost);

// Monotonic nanoseconds.
int64_t NetNowNanos();

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_NET_QUEUE_H_
