#include "agent/devices/aio_queue.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/strings.h"

namespace stormark::agent {

common::StatusOr<std::unique_ptr<AioQueue>> AioQueue::Create(int fd, uint32_t depth) {
  depth = std::max<uint32_t>(1, depth);
  std::unique_ptr<AioQueue> queue(new AioQueue(fd, depth));
  const int r = io_setup(static_cast<int>(depth), &queue->context_);
  if (r < 0) {
    queue->context_ = nullptr;
    std::string hint;
    if (r == -EAGAIN) hint = " (the host's AIO contexts are used up: sysctl fs.aio-max-nr)";
    if (r == -ENOSYS) hint = " (the kernel has no AIO)";
    return common::ErrnoError(common::StrCat("libaio with depth ", depth, hint), -r);
  }
  return queue;
}

AioQueue::AioQueue(int fd, uint32_t depth)
    : fd_(fd), depth_(depth), blocks_(depth), tags_(depth), events_(depth) {
  free_.reserve(depth);
  for (uint32_t i = 0; i < depth; ++i) free_.push_back(depth - 1 - i);
  pending_.reserve(depth);
  ready_.reserve(depth);
}

AioQueue::~AioQueue() {
  if (context_ == nullptr) return;
  // Requests still in the kernel write into their callers' buffers: wait for them first.
  while (in_kernel_ > 0) {
    if (!GetEvents(in_kernel_, in_kernel_, -1, nullptr).ok()) break;
  }
  io_destroy(context_);
}

void AioQueue::SubmitPending() {
  size_t done = 0;
  while (done < pending_.size()) {
    const int r =
        io_submit(context_, static_cast<long>(pending_.size() - done), pending_.data() + done);
    if (r > 0) {
      done += static_cast<size_t>(r);
      in_kernel_ += static_cast<uint32_t>(r);
      continue;
    }
    if (r == -EINTR) continue;
    if (r == -EAGAIN && in_kernel_ > 0) {
      // Out of kernel resources for now: let some complete, then go on.
      if (GetEvents(1, in_kernel_, -1, nullptr).ok()) continue;
    }
    // The kernel refused the first of them outright (a bad descriptor or buffer): it
    // completes with that error, and the rest are tried again.
    iocb* refused = pending_[done++];
    const uint32_t index = static_cast<uint32_t>(refused - blocks_.data());
    ready_.push_back(IoCompletion{tags_[index], r < 0 ? r : -EIO});
    free_.push_back(index);
  }
  pending_.clear();
}

common::StatusOr<size_t> AioQueue::GetEvents(size_t min, size_t max, int64_t timeout_nanos,
                                             IoCompletion* out) {
  max = std::min<size_t>({max, in_kernel_, events_.size()});
  min = std::min(min, max);
  if (max == 0) return 0;
  timespec ts{};
  timespec* timeout = nullptr;
  if (timeout_nanos >= 0) {
    ts.tv_sec = timeout_nanos / 1'000'000'000;
    ts.tv_nsec = timeout_nanos % 1'000'000'000;
    timeout = &ts;
  }
  int r;
  do {
    r = io_getevents(context_, static_cast<long>(min), static_cast<long>(max), events_.data(),
                     timeout);
  } while (r == -EINTR);
  if (r < 0) return common::ErrnoError("io_getevents", -r);
  for (int i = 0; i < r; ++i) {
    const io_event& event = events_[i];
    const uint32_t index = static_cast<uint32_t>(event.obj - blocks_.data());
    // res is the transfer's byte count, or -errno, in an unsigned long.
    const IoCompletion completion{tags_[index], static_cast<int64_t>(static_cast<long>(event.res))};
    if (out != nullptr) {
      out[i] = completion;
    } else {
      ready_.push_back(completion);
    }
    free_.push_back(index);
  }
  in_kernel_ -= static_cast<uint32_t>(r);
  return static_cast<size_t>(r);
}

common::Status AioQueue::Submit(std::span<const IoRequest> requests) {
  if (in_flight() + requests.size() > depth_) {
    return absl::FailedPreconditionError(common::StrCat(
        "queue full: ", in_flight(), " in flight + ", requests.size(), " > depth ", depth_));
  }
  for (const IoRequest& request : requests) {
    if (request.op == IoOp::kFsync || request.op == IoOp::kFdatasync) {
      // Everything before the flush completes first; the flush then runs here.
      SubmitPending();
      while (in_kernel_ > 0)
        RETURN_IF_ERROR(GetEvents(in_kernel_, in_kernel_, -1, nullptr).status());
      const int r = request.op == IoOp::kFdatasync ? fdatasync(fd_) : fsync(fd_);
      ready_.push_back(IoCompletion{request.tag, r == 0 ? 0 : -errno});
      continue;
    }
    const uint32_t index = free_.back();
    free_.pop_back();
    iocb* block = &blocks_[index];
    if (request.op == IoOp::kRead) {
      io_prep_pread(block, fd_, request.buffer, request.length,
                    static_cast<long long>(request.offset));
    } else {
      io_prep_pwrite(block, fd_, request.buffer, request.length,
                     static_cast<long long>(request.offset));
    }
    tags_[index] = request.tag;
    pending_.push_back(block);
  }
  SubmitPending();
  return absl::OkStatus();
}

common::StatusOr<size_t> AioQueue::Reap(size_t min_complete, std::span<IoCompletion> out,
                                        int64_t timeout_nanos) {
  min_complete = std::min<size_t>({min_complete, in_flight(), out.size()});
  size_t n = std::min(ready_.size(), out.size());
  std::copy(ready_.begin(), ready_.begin() + static_cast<long>(n), out.begin());
  ready_.erase(ready_.begin(), ready_.begin() + static_cast<long>(n));
  if (n < out.size() && in_kernel_ > 0) {
    // Without a wait still owed, take only what has completed already.
    const bool owed = n < min_complete;
    ASSIGN_OR_RETURN(const size_t got, GetEvents(owed ? min_complete - n : 0, out.size() - n,
                                                 owed ? timeout_nanos : 0, out.data() + n));
    n += got;
  }
  return n;
}

}  // namespace stormark::agent
