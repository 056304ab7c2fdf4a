// The AoE initiator proper: an IoQueue that turns block requests into tagged ATA frames
// (READ SECTORS EXT / WRITE SECTORS EXT, LBA48; FLUSH CACHE for a flush) on its own link, and
// runs the protocol on the caller's thread inside Submit and Reap (no helper thread).
//
// - A request is cut into frames of at most sectors_per_frame sectors. At most `window` frames
//   are in flight, and each holds one of the target's buffers (AoeServer credits shared by
//   every queue of the device), so the target's buffer count is never exceeded.
// - Every transmission carries a new tag: the queue's session byte, then a 24-bit sequence
//   number. A frame remembers the tags of its last few attempts; a reply to any of them
//   completes the frame (a reply to an earlier attempt is "late" but correct: it carries the
//   same sectors). A reply whose tag matches no frame in flight is stale (a duplicate, or a
//   reply to a request that already completed or failed) and is dropped without touching any
//   buffer. Since a reply names the attempt it answers, every reply gives an exact RTT
//   sample, even for a retransmitted frame (no need for Karn's rule): a target that is slow
//   rather than lossy raises the timeout instead of drawing spurious retransmissions.
// - An unanswered frame is sent again when its timer (RttEstimator, with backoff) expires. A
//   frame unanswered for request_timeout fails its request with ETIMEDOUT; if the target
//   answered nothing at all in the last half of that time, the target is marked lost and
//   every request of every queue fails at once. So a vanished target fails the phase within about
//   request_timeout, and never hangs it.
// - A flush waits until every earlier request has completed, and later requests wait for it
//   (as IOSQE_IO_DRAIN).
// - The target's errors fail the request with EIO; the detail (AoE error code, or the ATA
//   status and error registers) is kept in AoeServer::NoteFailure for the error message.
//
// Owned by one thread; not thread-safe. The destructor waits for requests still in flight
// (bounded by request_timeout), so buffers are never written after it returns.
#ifndef STORMARK_AGENT_DEVICES_AOE_AOE_QUEUE_H_
#define STORMARK_AGENT_DEVICES_AOE_AOE_QUEUE_H_

#include <array>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "agent/devices/aoe/aoe_server.h"
#include "agent/devices/aoe/frame_link.h"
#include "agent/devices/device.h"

namespace stormark::agent::aoe {

class AoeQueue final : public IoQueue {
 public:
  // A queue of `depth` requests with at most `window` frames in flight, on `link` (which
  // receives the replies tagged with `session`). `target` must outlive the queue. `size` is
  // the bytes requests may address; writes fail with EBADF unless `writable`.
  AoeQueue(AoeServer& target, std::unique_ptr<FrameLink> link, uint8_t session, uint32_t depth,
           uint32_t window, uint64_t size, bool writable);
  ~AoeQueue() override;

  AoeQueue(const AoeQueue&) = delete;
  AoeQueue& operator=(const AoeQueue&) = delete;

  // Adds the link's dropped frames to the target's counter.
  void CountDrops();

  uint32_t depth() const override { return depth_; }
  uint32_t in_flight() const override { return in_flight_; }
  common::Status Submit(std::span<const IoRequest> requests) override;
  common::StatusOr<size_t> Reap(size_t min_complete, std::span<IoCompletion> out,
                                int64_t timeout_nanos) override;

 private:
  // Tags of this many recent attempts of a frame are still accepted.
  static constexpr size_t kTagsKept = 4;
  static constexpr uint32_t kNone = UINT32_MAX;

  struct Request {
    IoRequest io;
    uint64_t issued = 0;      // bytes cut into frames so far
    uint32_t frames_out = 0;  // frames in flight
    int64_t error = 0;        // -errno once failed
    bool flush_sent = false;
  };
  // A frame in flight: one tag slot.
  struct Frame {
    uint32_t request = kNone;  // kNone when the slot is free
    uint64_t lba = 0;
    uint32_t sectors = 0;
    uint64_t buffer_offset = 0;  // of its data in the request's buffer
    uint32_t attempts = 0;
    std::array<uint32_t, kTagsKept> tags{};  // of the last attempts, by attempt % kTagsKept
    std::array<int64_t, kTagsKept> sent{};   // when each of those attempts was sent
    int64_t first_sent = 0, last_sent = 0, expires = 0;
    std::array<uint8_t, kAtaHeaderSize> head{};
  };

  bool IsFlush(const Request& r) const {
    return r.io.op == IoOp::kFsync || r.io.op == IoOp::kFdatasync;
  }
  // Starts one request (the slot is free).
  void Start(const IoRequest& io);
  // One turn of the protocol: retransmits what expired and sends what fits the window.
  common::Status Pump(int64_t now);
  // Cuts new frames from the queued requests while the window and the credits allow.
  void FillWindow(int64_t now);
  // Builds frame `slot` for `request` and queues it for sending.
  void Transmit(uint32_t slot, int64_t now);
  void HandleExpired(int64_t now);
  void HandleReply(std::span<const uint8_t> frame, int64_t now);
  // Frees a frame slot and its credit.
  void ReleaseFrame(uint32_t slot);
  // A frame of `request` has completed.
  void FrameDone(uint32_t slot);
  // Fails `request` (its frames in flight are forgotten) with -errno and `detail`.
  void Fail(uint32_t request, int errno_value, const std::string& detail);
  void FailAll(int errno_value, const std::string& detail);
  // Moves a finished request to the completions.
  void Finish(uint32_t request);
  // "a read of 2 sectors at LBA 2048".
  std::string DescribeFrame(const Frame& frame) const;
  uint32_t NewTag() { return uint32_t{session_} << 24 | (sequence_++ & 0xffffff); }
  int64_t NextDeadline() const;

  AoeServer& target_;
  const AoeServerParams& params_;
  std::unique_ptr<FrameLink> link_;
  const uint8_t session_;
  const uint32_t depth_;
  const uint32_t window_;
  const uint64_t size_;
  const bool writable_;
  uint32_t sequence_;

  std::vector<Request> requests_;  // depth_ slots
  std::vector<uint32_t> free_requests_;
  std::deque<uint32_t> order_;  // active requests, oldest first
  std::vector<Frame> frames_;   // window_ slots
  std::vector<uint32_t> free_frames_;
  std::deque<IoCompletion> done_;
  uint32_t in_flight_ = 0;  // submitted and not yet reaped
  bool starved_ = false;    // frames wait for credits other queues hold

  std::vector<TxFrame> tx_;  // frames to send in this turn
  std::vector<std::vector<uint8_t>> rx_buffers_;
  std::vector<RxFrame> rx_;
};

}  // namespace stormark::agent::aoe

#endif  // STORMARK_AGENT_DEVICES_AOE_AOE_QUEUE_H_
