// The libaio engine: Linux native AIO (io_submit / io_getevents) through Debian's libaio, one
// AIO context per queue, reading and writing one descriptor, as fio's libaio engine.
//
// The kernel runs a request asynchronously only on a descriptor opened with O_DIRECT; on a
// buffered one, io_submit does the copy itself and returns when it is done, so the queue then
// behaves as a synchronous one (fio users meet this as "libaio without direct=1").
//
// AIO has no ordered flush, so a flush waits for every earlier request of the queue to
// complete, then runs fsync(2) or fdatasync(2) on the calling thread and completes at once,
// as fio's libaio engine does (it refuses to queue a sync while requests are in flight).
#ifndef STORMARK_AGENT_DEVICES_AIO_QUEUE_H_
#define STORMARK_AGENT_DEVICES_AIO_QUEUE_H_

#include <libaio.h>

#include <memory>
#include <vector>

#include "agent/devices/device.h"

namespace stormark::agent {

class AioQueue final : public IoQueue {
 public:
  // A context of `depth` requests on `fd`, which must outlive the queue. Fails with a message
  // that names the limit when the host's fs.aio-max-nr is used up.
  static common::StatusOr<std::unique_ptr<AioQueue>> Create(int fd, uint32_t depth);
  ~AioQueue() override;

  AioQueue(const AioQueue&) = delete;
  AioQueue& operator=(const AioQueue&) = delete;

  uint32_t depth() const override { return depth_; }
  uint32_t in_flight() const override { return in_kernel_ + static_cast<uint32_t>(ready_.size()); }
  common::Status Submit(std::span<const IoRequest> requests) override;
  common::StatusOr<size_t> Reap(size_t min_complete, std::span<IoCompletion> out,
                                int64_t timeout_nanos) override;

 private:
  AioQueue(int fd, uint32_t depth);

  // Hands the control blocks gathered in pending_ to the kernel. One the kernel refuses
  // outright completes with its error, as a failed request does.
  void SubmitPending();
  // Waits for at least `min` of the requests in the kernel (all of them when `min` is
  // in_kernel_), or until the timeout (relative, ns; -1 for none), and appends them to `out`
  // (or to ready_ when `out` is null), at most `max`. Returns how many.
  common::StatusOr<size_t> GetEvents(size_t min, size_t max, int64_t timeout_nanos,
                                     IoCompletion* out);

  io_context_t context_ = nullptr;
  const int fd_;
  const uint32_t depth_;
  // One control block per slot of the queue; free_ holds the unused ones' indices, tags_ the
  // caller's tag of each used one.
  std::vector<iocb> blocks_;
  std::vector<uint64_t> tags_;
  std::vector<uint32_t> free_;
  std::vector<iocb*> pending_;
  std::vector<io_event> events_;
  // Requests completed and not yet reaped (flushes, refusals, what a flush's wait reaped).
  std::vector<IoCompletion> ready_;
  uint32_t in_kernel_ = 0;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_AIO_QUEUE_H_
