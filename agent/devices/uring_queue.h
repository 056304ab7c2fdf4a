// The io_uring engine: one ring per queue (liburing), reading and writing one descriptor. A
// flush is submitted with IOSQE_IO_DRAIN, so it starts only after every earlier request of
// this queue has completed, as fsync(2) after those writes would.
//
// The descriptor is registered with the ring (fio's registerfiles), and so are the buffers
// UseBuffers names (fixedbufs): a request in one of them is a READ_FIXED or WRITE_FIXED,
// which spares the kernel looking up the file and pinning the pages on every request. Where
// the kernel refuses either (old kernels, the locked-memory limit), requests go the ordinary
// way, which only costs time.
#ifndef STORMARK_AGENT_DEVICES_URING_QUEUE_H_
#define STORMARK_AGENT_DEVICES_URING_QUEUE_H_

#include <liburing.h>

#include <memory>
#include <vector>

#include "agent/devices/device.h"

namespace stormark::agent {

class UringQueue final : public IoQueue {
 public:
  // A ring of `depth` entries on `fd`, which must outlive the queue. Fails with a message that
  // says so when the kernel has io_uring disabled or the memlock limit is too small.
  // A write on a descriptor opened read-only completes with -EBADF, as pwrite would.
  static common::StatusOr<std::unique_ptr<UringQueue>> Create(int fd, uint32_t depth);
  ~UringQueue() override;

  UringQueue(const UringQueue&) = delete;
  UringQueue& operator=(const UringQueue&) = delete;

  uint32_t depth() const override { return depth_; }
  uint32_t in_flight() const override { return in_flight_; }
  common::Status Submit(std::span<const IoRequest> requests) override;
  common::StatusOr<size_t> Reap(size_t min_complete, std::span<IoCompletion> out,
                                int64_t timeout_nanos) override;
  void UseBuffers(std::span<const std::span<char>> buffers) override;

  // Whether the descriptor, and buffers, are registered with the ring (for tests).
  bool file_registered() const { return file_registered_; }
  size_t buffers_registered() const { return registered_.size(); }

 private:
  UringQueue(int fd, uint32_t depth);

  // The registered buffer holding [data, data + length), or -1.
  int RegisteredIndex(const char* data, uint32_t length) const;

  io_uring ring_{};
  const int fd_;
  const uint32_t depth_;
  uint32_t in_flight_ = 0;
  bool file_registered_ = false;
  // The registered buffers by start address: (start, size, index).
  struct Registered {
    const char* start;
    size_t size;
    int index;
  };
  std::vector<Registered> registered_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_URING_QUEUE_H_
