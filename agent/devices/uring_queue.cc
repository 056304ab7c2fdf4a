#include "agent/devices/uring_queue.h"

#include <algorithm>
#include <cerrno>

#include "common/strings.h"

namespace stormark::agent {

common::StatusOr<std::unique_ptr<UringQueue>> UringQueue::Create(int fd, uint32_t depth) {
  depth = std::max<uint32_t>(1, depth);
  std::unique_ptr<UringQueue> queue(new UringQueue(fd, depth));
  // The default set-up. fio 3.33 sets up its rings with SINGLE_ISSUER and DEFER_TASKRUN
  // (strace); with those, 0.96-0.99 of fio against 0.94-0.96 without, inside the runs' spread,
  // and the batched-queue test (iodepth_low, complete_min 4, a drained fdatasync every 64
  // writes) hung in io_uring_wait_cqes within 4 runs (2026-12-06), so they are not used.
  // COOP_TASKRUN alone measured no better (0.87 and 0.94 of fio with it, 1.02 and 1.10
  // without, on the same virtio file; bench/randio_vs_fio.py).
  const int r = io_uring_queue_init(depth, &queue->ring_, 0);
  if (r < 0) {
    queue->ring_.ring_fd = -1;
    std::string hint;
    if (r == -EPERM || r == -ENOSYS) hint = " (io_uring is disabled: kernel.io_uring_disabled?)";
    if (r == -ENOMEM) hint = " (the locked-memory limit is too small: ulimit -l)";
    return common::ErrnoError(common::StrCat("io_uring with depth ", depth, hint), -r);
  }
  queue->file_registered_ = io_uring_register_files(&queue->ring_, &queue->fd_, 1) == 0;
  return queue;
}

void UringQueue::UseBuffers(std::span<const std::span<char>> buffers) {
  if (!registered_.empty() || buffers.empty() || in_flight_ > 0) return;
  std::vector<iovec> vectors;
  vectors.reserve(buffers.size());
  for (const std::span<char>& buffer : buffers) vectors.push_back({buffer.data(), buffer.size()});
  if (io_uring_register_buffers(&ring_, vectors.data(), static_cast<unsigned>(vectors.size())) !=
      0) {
    return;  // Refused (the locked-memory limit): the ordinary way.
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    registered_.push_back({buffers[i].data(), buffers[i].size(), static_cast<int>(i)});
  }
  std::sort(registered_.begin(), registered_.end(),
            [](const Registered& a, const Registered& b) { return a.start < b.start; });
}

int UringQueue::RegisteredIndex(const char* data, uint32_t length) const {
  // The last buffer starting at or before `data`.
  auto it = std::upper_bound(registered_.begin(), registered_.end(), data,
                             [](const char* p, const Registered& r) { return p < r.start; });
  if (it == registered_.begin()) return -1;
  --it;
  return data + length <= it->start + it->size ? it->index : -1;
}

UringQueue::UringQueue(int fd, uint32_t depth) : fd_(fd), depth_(depth) {}

UringQueue::~UringQueue() {
  if (ring_.ring_fd < 0) return;
  // Requests still in flight write into their callers' buffers: wait for them first.
  while (in_flight_ > 0) {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_wait_cqe(&ring_, &cqe) < 0) break;
    io_uring_cqe_seen(&ring_, cqe);
    --in_flight_;
  }
  // The ring's own teardown runs later, in a kernel worker, and with it the release of the
  // registered file: a block device opened with O_EXCL would stay claimed for a moment after
  // this returns, and the next phase's exclusive open of it fail with EBUSY. Unregistered
  // here, the file is released before the destructor returns.
  if (file_registered_) io_uring_unregister_files(&ring_);
  io_uring_queue_exit(&ring_);
}

common::Status UringQueue::Submit(std::span<const IoRequest> requests) {
  if (in_flight_ + requests.size() > depth_) {
    return absl::FailedPreconditionError(common::StrCat("queue full: ", in_flight_, " in flight + ",
                                                        requests.size(), " > depth ", depth_));
  }
  for (const IoRequest& request : requests) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) return absl::InternalError("io_uring: no free submission entry");
    // A registered file is named by its index in the ring's table, 0.
    const int fd = file_registered_ ? 0 : fd_;
    const int fixed =
        request.op == IoOp::kRead || request.op == IoOp::kWrite
            ? (registered_.empty() ? -1 : RegisteredIndex(request.buffer, request.length))
            : -1;
    switch (request.op) {
      case IoOp::kRead:
        if (fixed >= 0) {
          io_uring_prep_read_fixed(sqe, fd, request.buffer, request.length, request.offset, fixed);
        } else {
          io_uring_prep_read(sqe, fd, request.buffer, request.length, request.offset);
        }
        break;
      case IoOp::kWrite:
        if (fixed >= 0) {
          io_uring_prep_write_fixed(sqe, fd, request.buffer, request.length, request.offset, fixed);
        } else {
          io_uring_prep_write(sqe, fd, request.buffer, request.length, request.offset);
        }
        break;
      case IoOp::kFsync:
      case IoOp::kFdatasync:
        io_uring_prep_fsync(sqe, fd, request.op == IoOp::kFdatasync ? IORING_FSYNC_DATASYNC : 0);
        sqe->flags |= IOSQE_IO_DRAIN;
        break;
    }
    if (file_registered_) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, request.tag);
  }
  // io_uring_submit may take only part of the batch when the kernel is short of memory; what
  // it did not take stays in the submission ring and goes with the next call.
  size_t left = requests.size();
  while (left > 0) {
    const int r = io_uring_submit(&ring_);
    if (r == -EINTR || r == -EAGAIN) continue;
    if (r < 0) return common::ErrnoError("io_uring_submit", -r);
    left -= std::min<size_t>(left, static_cast<size_t>(r));
    if (r == 0) break;
  }
  in_flight_ += static_cast<uint32_t>(requests.size());
  return absl::OkStatus();
}

common::StatusOr<size_t> UringQueue::Reap(size_t min_complete, std::span<IoCompletion> out,
                                          int64_t timeout_nanos) {
  min_complete = std::min<size_t>({min_complete, in_flight_, out.size()});
  if (min_complete > 0) {
    io_uring_cqe* cqe = nullptr;
    __kernel_timespec ts{};
    __kernel_timespec* timeout = nullptr;
    if (timeout_nanos >= 0) {
      ts.tv_sec = timeout_nanos / 1'000'000'000;
      ts.tv_nsec = timeout_nanos % 1'000'000'000;
      timeout = &ts;
    }
    for (;;) {
      const int r =
          io_uring_wait_cqes(&ring_, &cqe, static_cast<unsigned>(min_complete), timeout, nullptr);
      if (r == 0 || r == -ETIME) break;
      if (r == -EINTR) continue;
      return common::ErrnoError("io_uring_wait_cqes", -r);
    }
  }
  size_t n = 0;
  io_uring_cqe* cqe = nullptr;
  while (n < out.size() && io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) {
    out[n].tag = io_uring_cqe_get_data64(cqe);
    out[n].result = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    ++n;
  }
  in_flight_ -= static_cast<uint32_t>(n);
  return n;
}

}  // namespace stormark::agent
