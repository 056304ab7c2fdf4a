#include "agent/devices/aoe/aoe_queue.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::agent::aoe {
namespace {

// Replies read per receive call.
constexpr size_t kRxBatch = 32;
// How soon a queue whose frames wait for credits held by other queues looks again.
constexpr int64_t kStarvedPollNanos = 200'000;

double Seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

}  // namespace

AoeQueue::AoeQueue(AoeServer& target, std::unique_ptr<FrameLink> link, uint8_t session,
                   uint32_t depth, uint32_t window, uint64_t size, bool writable)
    : target_(target),
      params_(target.params()),
      link_(std::move(link)),
      session_(session),
      depth_(std::max<uint32_t>(1, depth)),
      window_(std::max<uint32_t>(1, window)),
      size_(size),
      writable_(writable),
      sequence_(std::random_device{}()),
      requests_(depth_),
      frames_(window_) {
  for (uint32_t i = depth_; i-- > 0;) free_requests_.push_back(i);
  for (uint32_t i = window_; i-- > 0;) free_frames_.push_back(i);
  const size_t frame_size = link_->mtu() + kEthernetHeaderSize + 64;
  rx_buffers_.resize(kRxBatch, std::vector<uint8_t>(frame_size));
  for (auto& b : rx_buffers_) rx_.push_back(RxFrame{b, 0});
  tx_.reserve(window_);
}

AoeQueue::~AoeQueue() {
  // Requests still in flight finish or fail (within the request timeout) before their
  // buffers may go away. A cancelled phase does not wait: replies are copied into buffers
  // only on this thread, inside Reap, so abandoning the frames is safe (their late replies
  // carry this queue's session and reach no one).
  std::vector<IoCompletion> sink(depth_);
  while (in_flight_ > done_.size()) {
    // Also when the phase is cancelled while this waits: Reap then returns at once.
    if (target_.options().is_cancelled()) {
      FailAll(ECANCELED, "the phase was cancelled");
      break;
    }
    if (!Reap(in_flight_, sink, -1).ok()) break;
  }
  for (const Frame& f : frames_) {
    if (f.request != kNone) target_.ReturnCredits(1);
  }
  CountDrops();
}

void AoeQueue::CountDrops() {
  target_.socket_drops.fetch_add(link_->TakeDrops(), std::memory_order_relaxed);
}

common::Status AoeQueue::Submit(std::span<const IoRequest> requests) {
  if (in_flight_ + requests.size() > depth_) {
    return absl::FailedPreconditionError(common::StrCat("AoE queue: ", requests.size(),
                                                        " more requests would exceed its depth of ",
                                                        depth_, " (", in_flight_, " in flight)"));
  }
  for (const IoRequest& io : requests) Start(io);
  return Pump(target_.clock().MonotonicNanos());
}

void AoeQueue::Start(const IoRequest& io) {
  const uint32_t index = free_requests_.back();
  free_requests_.pop_back();
  ++in_flight_;
  Request& r = requests_[index];
  r = Request{};
  r.io = io;
  order_.push_back(index);
  if (IsFlush(r)) return;
  if (io.op == IoOp::kWrite && !writable_) {
    Fail(index, EBADF, "the device was opened read-only");
  } else if (io.offset % kSectorSize != 0 || io.length % kSectorSize != 0) {
    Fail(index, EINVAL, "AoE moves whole 512-byte sectors: offset and length must be multiples");
  } else if (io.offset + io.length > size_ || io.offset + io.length < io.offset) {
    Fail(index, EINVAL, "the request reaches beyond the end of the device");
  } else if (target_.lost()) {
    Fail(index, ETIMEDOUT, target_.lost_reason());
  } else if (io.length == 0) {
    Finish(index);
  }
}

common::Status AoeQueue::Pump(int64_t now) {
  if (target_.lost()) FailAll(ETIMEDOUT, target_.lost_reason());
  HandleExpired(now);
  FillWindow(now);
  if (tx_.empty()) return absl::OkStatus();
  const common::Status sent = link_->Send(tx_);
  tx_.clear();
  if (!sent.ok()) FailAll(EIO, std::string(sent.message()));
  return absl::OkStatus();
}

void AoeQueue::FillWindow(int64_t now) {
  starved_ = false;
  bool earlier_busy = false;  // an earlier request still has frames to send or in flight
  for (const uint32_t index : order_) {
    Request& r = requests_[index];
    if (r.error != 0) continue;
    if (IsFlush(r)) {
      // A flush goes alone: after every earlier request, before every later one.
      if (!r.flush_sent && !earlier_busy) {
        if (free_frames_.empty()) return;
        if (!target_.TakeCredit()) {
          starved_ = true;
          return;
        }
        const uint32_t slot = free_frames_.back();
        free_frames_.pop_back();
        Frame& f = frames_[slot];
        f = Frame{};
        f.request = index;
        r.flush_sent = true;
        ++r.frames_out;
        Transmit(slot, now);
      }
      return;
    }
    while (r.issued < r.io.length) {
      if (free_frames_.empty()) return;
      if (!target_.TakeCredit()) {
        starved_ = true;
        return;
      }
      const uint32_t slot = free_frames_.back();
      free_frames_.pop_back();
      Frame& f = frames_[slot];
      f = Frame{};
      f.request = index;
      f.buffer_offset = r.issued;
      f.lba = (r.io.offset + r.issued) / kSectorSize;
      f.sectors = static_cast<uint32_t>(
          std::min<uint64_t>(params_.sectors_per_frame, (r.io.length - r.issued) / kSectorSize));
      r.issued += uint64_t{f.sectors} * kSectorSize;
      ++r.frames_out;
      Transmit(slot, now);
    }
    if (r.frames_out > 0) earlier_busy = true;
  }
}

void AoeQueue::Transmit(uint32_t slot, int64_t now) {
  Frame& f = frames_[slot];
  const Request& r = requests_[f.request];
  Header header;
  header.dst = params_.mac;
  header.src = link_->mac();
  header.shelf = params_.address.shelf;
  header.slot = params_.address.slot;
  header.command = kCommandAta;
  header.tag = NewTag();
  AtaArg ata;
  std::span<const uint8_t> payload;
  if (IsFlush(r)) {
    ata.cmd_status = kAtaFlushCache;
  } else {
    ata.aflags = kAtaExtended;
    ata.sector_count = static_cast<uint8_t>(f.sectors);
    ata.lba = f.lba;
    if (r.io.op == IoOp::kWrite) {
      ata.aflags |= kAtaWrite;
      ata.cmd_status = kAtaWriteExt;
      payload = {reinterpret_cast<const uint8_t*>(r.io.buffer) + f.buffer_offset,
                 size_t{f.sectors} * kSectorSize};
    } else {
      ata.cmd_status = kAtaReadExt;
    }
  }
  EncodeAta(header, ata, f.head);
  f.tags[f.attempts % kTagsKept] = header.tag;
  f.sent[f.attempts % kTagsKept] = now;
  ++f.attempts;
  f.last_sent = now;
  if (f.attempts == 1) {
    f.first_sent = now;
    target_.frames.fetch_add(1, std::memory_order_relaxed);
  } else {
    target_.retransmits.fetch_add(1, std::memory_order_relaxed);
  }
  // The timer never runs past the frame's last moment, so that giving up is on time.
  f.expires = std::min(now + target_.rtt().Timeout(f.attempts),
                       f.first_sent + target_.options().request_timeout_nanos);
  tx_.push_back(TxFrame{f.head, payload});
}

void AoeQueue::HandleExpired(int64_t now) {
  const int64_t give_up = target_.options().request_timeout_nanos;
  for (uint32_t slot = 0; slot < window_; ++slot) {
    Frame& f = frames_[slot];
    if (f.request == kNone || f.expires > now) continue;
    if (now - f.first_sent < give_up) {
      Transmit(slot, now);
      continue;
    }
    target_.timeouts.fetch_add(1, std::memory_order_relaxed);
    const std::string what = fmt::format(
        "no reply from AoE target {} on {} to {} after {} attempts in {:.1f} s",
        DescribeAddress(params_.address.shelf, params_.address.slot), params_.address.interface,
        DescribeFrame(f), f.attempts, Seconds(now - f.first_sent));
    if (now - target_.last_heard() >= give_up / 2) {
      // Not one lost frame: the target has answered nothing for a long time.
      target_.MarkLost(
          fmt::format("{}; the target answered nothing for {:.1f} s: it is gone or unreachable",
                      what, Seconds(now - target_.last_heard())));
      FailAll(ETIMEDOUT, target_.lost_reason());
      return;
    }
    Fail(f.request, ETIMEDOUT, what);
  }
}

void AoeQueue::HandleReply(std::span<const uint8_t> bytes, int64_t now) {
  Header h;
  if (!ParseHeader(bytes, &h) || !(h.flags & kFlagResponse) || h.command != kCommandAta ||
      (h.tag >> 24) != session_) {
    return;  // not ours: discovery, another initiator's session
  }
  uint32_t slot = kNone;
  size_t attempt = 0;  // which of the kept attempts the reply answers
  for (uint32_t s = 0; s < window_ && slot == kNone; ++s) {
    const Frame& f = frames_[s];
    if (f.request == kNone) continue;
    const size_t kept = std::min<size_t>(f.attempts, kTagsKept);
    for (size_t i = 0; i < kept; ++i) {
      if (f.tags[i] == h.tag) {
        slot = s;
        attempt = i;
      }
    }
  }
  if (slot == kNone || h.src != params_.mac || h.shelf != params_.address.shelf ||
      h.slot != params_.address.slot) {
    target_.stale_replies.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Frame& f = frames_[slot];
  target_.Heard(now);
  target_.rtt().Sample(now - f.sent[attempt]);
  if (attempt != (f.attempts - 1) % kTagsKept) {
    target_.late_replies.fetch_add(1, std::memory_order_relaxed);
  }
  const uint32_t index = f.request;
  Request& r = requests_[index];
  if (h.flags & kFlagError) {
    target_.errors.fetch_add(1, std::memory_order_relaxed);
    Fail(index, EIO,
         common::StrCat("AoE target answered ", DescribeFrame(f), " with ", AoeErrorText(h.error)));
    return;
  }
  AtaArg ata;
  if (!ParseAta(bytes, &ata)) {
    Fail(index, EIO, common::StrCat("truncated AoE reply to ", DescribeFrame(f)));
    return;
  }
  if (AtaFailed(ata.cmd_status)) {
    target_.errors.fetch_add(1, std::memory_order_relaxed);
    Fail(index, EIO,
         common::StrCat("AoE target failed ", DescribeFrame(f), ": ",
                        AtaErrorText(ata.cmd_status, ata.err_feature)));
    return;
  }
  if (r.io.op == IoOp::kRead) {
    const size_t n = size_t{f.sectors} * kSectorSize;
    if (bytes.size() < kAtaHeaderSize + n) {
      Fail(index, EIO,
           fmt::format("AoE reply to {} carried {} bytes of data, not {}", DescribeFrame(f),
                       bytes.size() - kAtaHeaderSize, n));
      return;
    }
    std::memcpy(r.io.buffer + f.buffer_offset, bytes.data() + kAtaHeaderSize, n);
  }
  FrameDone(slot);
}

void AoeQueue::ReleaseFrame(uint32_t slot) {
  // A transmission still queued in this turn goes too: the slot's header may be reused
  // before the turn's frames are sent.
  const uint8_t* head = frames_[slot].head.data();
  std::erase_if(tx_, [head](const TxFrame& t) { return t.head.data() == head; });
  frames_[slot].request = kNone;
  free_frames_.push_back(slot);
  target_.ReturnCredits(1);
}

void AoeQueue::FrameDone(uint32_t slot) {
  const uint32_t index = frames_[slot].request;
  Request& r = requests_[index];
  ReleaseFrame(slot);
  --r.frames_out;
  const bool all_sent = IsFlush(r) ? r.flush_sent : r.issued == r.io.length;
  if (r.frames_out == 0 && all_sent) Finish(index);
}

void AoeQueue::Fail(uint32_t index, int errno_value, const std::string& detail) {
  Request& r = requests_[index];
  if (r.error != 0) return;
  r.error = -errno_value;
  for (uint32_t slot = 0; slot < window_; ++slot) {
    if (frames_[slot].request == index) ReleaseFrame(slot);
  }
  r.frames_out = 0;
  target_.NoteFailure(r.io, detail);
  Finish(index);
}

void AoeQueue::FailAll(int errno_value, const std::string& detail) {
  const std::deque<uint32_t> active = order_;
  for (const uint32_t index : active) Fail(index, errno_value, detail);
}

void AoeQueue::Finish(uint32_t index) {
  Request& r = requests_[index];
  const int64_t result = r.error != 0 ? r.error
                         : IsFlush(r) ? 0
                                      : static_cast<int64_t>(r.io.length);
  done_.push_back(IoCompletion{r.io.tag, result});
  order_.erase(std::find(order_.begin(), order_.end(), index));
  free_requests_.push_back(index);
}

std::string AoeQueue::DescribeFrame(const Frame& f) const {
  const Request& r = requests_[f.request];
  if (IsFlush(r)) return "a FLUSH CACHE";
  return fmt::format("a {} of {} sectors at LBA {}", r.io.op == IoOp::kWrite ? "write" : "read",
                     f.sectors, f.lba);
}

int64_t AoeQueue::NextDeadline() const {
  int64_t next = INT64_MAX;
  for (const Frame& f : frames_) {
    if (f.request != kNone) next = std::min(next, f.expires);
  }
  return next;
}

common::StatusOr<size_t> AoeQueue::Reap(size_t min_complete, std::span<IoCompletion> out,
                                        int64_t timeout_nanos) {
  const common::Clock& clock = target_.clock();
  int64_t now = clock.MonotonicNanos();
  const int64_t deadline = timeout_nanos < 0 ? INT64_MAX : now + timeout_nanos;
  min_complete = std::min<size_t>(min_complete, in_flight_);
  while (true) {
    // Cancelled: what has completed is returned, and the caller sees the flag and stops.
    if (target_.options().is_cancelled()) break;
    RETURN_IF_ERROR(Pump(now));
    // Once satisfied, replies that have already arrived are still taken, once, without
    // waiting.
    const bool satisfied = done_.size() >= min_complete || now >= deadline;
    int64_t wait = 0;
    if (!satisfied) {
      int64_t wake = std::min(deadline, NextDeadline());
      if (starved_) wake = std::min(wake, now + kStarvedPollNanos);
      wait = std::clamp<int64_t>(wake - now, 0, kCancelSliceNanos);
    }
    auto got = link_->Receive(rx_, wait);
    now = clock.MonotonicNanos();
    if (!got.ok()) {
      FailAll(EIO, std::string(got.status().message()));  // completes every request
      break;
    }
    for (size_t i = 0; i < *got; ++i) HandleReply({rx_[i].buffer.data(), rx_[i].length}, now);
    if (satisfied) {
      // Frames just freed carry on with the requests still queued.
      RETURN_IF_ERROR(Pump(now));
      break;
    }
  }
  const size_t n = std::min(out.size(), done_.size());
  for (size_t i = 0; i < n; ++i) {
    out[i] = done_.front();
    done_.pop_front();
  }
  in_flight_ -= static_cast<uint32_t>(n);
  return n;
}

}  // namespace stormark::agent::aoe
