// What the user-space network initiators (NbdDevice, IscsiDevice) share: one connection per
// queue, and the blocking Execute on one more connection, opened when first needed and again
// after it was lost, all within NetOptions' bounds. A subclass says how to connect.
#ifndef STORMARK_AGENT_DEVICES_NET_DEVICE_H_
#define STORMARK_AGENT_DEVICES_NET_DEVICE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/devices/device.h"
#include "agent/devices/net_queue.h"

namespace stormark::agent {

class NetDevice : public Device {
 public:
  uint64_t size() const override { return size_; }
  uint32_t block_size() const override { return block_size_; }
  int64_t Execute(const IoRequest& request) override;
  common::StatusOr<std::unique_ptr<IoQueue>> OpenQueue(uint32_t depth) override;
  std::map<std::string, std::string> Stats() const override { return stats_.ToMap(stats_prefix_); }

 protected:
  // `what` names the server in errors: "NBD server nbd://127.0.0.1:10809/x".
  // `stats_prefix` starts the names of the counters in Stats(): "nbd", "iscsi".
  NetDevice(NetOptions net, std::string what, std::string stats_prefix)
      : net_(net), what_(std::move(what)), stats_prefix_(std::move(stats_prefix)) {}

  // A new connection, logged in and ready for requests. Thread-safe.
  virtual common::StatusOr<std::unique_ptr<NetConnection>> Connect() = 0;
  // The connection Execute uses first (the one Open learnt the size on).
  void set_main(std::unique_ptr<NetConnection> connection);

  uint64_t size_ = 0;
  uint32_t block_size_ = 512;
  mutable NetStats stats_;

 private:
  const NetOptions net_;
  const std::string what_;
  const std::string stats_prefix_;
  absl::Mutex mu_;
  std::unique_ptr<NetConnection> main_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_NET_DEVICE_H_
