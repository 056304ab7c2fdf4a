#include "agent/workloads/randio/randio_job.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <span>
#include <cstring>
#include <thread>

#include "common/strings.h"

namespace stormark::agent {
namespace {

constexpr size_t kStampEvery = 4096;

}  // namespace

common::StatusOr<std::unique_ptr<RandioJob>> RandioJob::Create(const JobPlan& plan,
                                                               Device& device) {
  std::unique_ptr<RandioJob> job(new RandioJob(plan, device));
  common::Xoshiro256 random(plan.data_seed);
  job->buffers_.reserve(plan.iodepth);
  job->slots_.reserve(plan.iodepth);
  job->free_slots_.reserve(plan.iodepth);
  for (uint32_t i = 0; i < plan.iodepth; ++i) {
    auto buffer = IoBuffer::Allocate(plan.offsets.bs_max);
    if (!buffer.ok()) {
      return common::Annotate(buffer.status(), common::StrCat("randio: job ", plan.job, ", buffer ",
                                                              i + 1, " of iodepth ", plan.iodepth));
    }
    random.Fill(buffer->data(), plan.offsets.bs_max);
    job->buffers_.push_back(std::move(*buffer));
    job->slots_.push_back(Slot{});
    job->slots_.back().request.buffer = job->buffers_.back().data();
    job->slots_.back().request.tag = i;
    job->free_slots_.push_back(plan.iodepth - 1 - i);
  }
  ASSIGN_OR_RETURN(job->queue_, device.OpenQueue(plan.iodepth));
  std::vector<std::span<char>> buffers;
  for (IoBuffer& buffer : job->buffers_) buffers.emplace_back(buffer.data(), plan.offsets.bs_max);
  job->queue_->UseBuffers(buffers);
  return job;
}

RandioJob::RandioJob(const JobPlan& plan, Device& device)
    : plan_(plan), device_(device), poisson_random_(plan.data_seed ^ 0x9015507) {}

int64_t RandioJob::RateAllowed(int64_t rate_start, uint64_t ops, uint64_t bytes, uint32_t length) {
  if (!plan_.rate_poisson) {
    // Even spacing: operation n may go at n / rate.
    int64_t allowed = rate_start;
    if (plan_.rate_iops != 0) {
      allowed = std::max<int64_t>(allowed,
                                  rate_start + static_cast<int64_t>(ops * 1e9 / plan_.rate_iops));
    }
    if (plan_.rate_bytes != 0) {
      allowed = std::max<int64_t>(
          allowed, rate_start + static_cast<int64_t>(bytes * 1e9 / plan_.rate_bytes));
    }
    return allowed;
  }
  // A Poisson process: each gap exponential, with the mean the rate gives this operation.
  if (poisson_next_ == 0) poisson_next_ = rate_start;
  return poisson_next_;
}

bool RandioJob::Think(const JobShared& shared) {
  const common::Clock& clock = shared.clock;
  const int64_t start = clock.MonotonicNanos();
  const int64_t spin_end = start + std::min(plan_.think_spin_nanos, plan_.think_nanos);
  while (clock.MonotonicNanos() < spin_end) {
    if (shared.cancelled.load(std::memory_order_relaxed)) return false;
  }
  const int64_t end = start + plan_.think_nanos;
  for (int64_t now = clock.MonotonicNanos(); now < end; now = clock.MonotonicNanos()) {
    if (shared.cancelled.load(std::memory_order_relaxed)) return false;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(end - now, 20'000'000)));
  }
  return true;
}

void RandioJob::PrepareWrite(Slot& slot, VerifyBook* book) {
  IoRequest& r = slot.request;
  if (book != nullptr) {
    slot.generation = book->NextGeneration();
    book->Stamp(r.buffer, r.offset, r.length, slot.generation, plan_.job);
    return;
  }
  // Offset and a per-job write count in every 4 KiB: no two written blocks are alike.
  const uint64_t count = writes_;
  for (size_t at = 0; at + 16 <= r.length; at += kStampEvery) {
    const uint64_t offset = r.offset + at;
    std::memcpy(r.buffer + at, &offset, 8);
    std::memcpy(r.buffer + at + 8, &count, 8);
  }
}

bool RandioJob::Overlaps(const RandioIo& io, bool io_writes) const {
  for (const Slot& slot : slots_) {
    if (!slot.busy) continue;
    const IoRequest& r = slot.request;
    if (r.op != IoOp::kRead && r.op != IoOp::kWrite) continue;
    if (!io_writes && r.op != IoOp::kWrite) continue;
    if (io.offset < r.offset + r.length && r.offset < io.offset + io.length) return true;
  }
  return false;
}

void RandioJob::AddRecorders(const JobShared& shared) {
  read_ = shared.recorders.Add();
  write_ = shared.recorders.Add();
  flush_ = std::make_unique<common::Recorder>(shared.recorders.start_mono_nanos());
}

common::Status RandioJob::Complete(const IoCompletion& completion, int64_t now,
                                   const JobShared& shared) {
  Slot& slot = slots_[completion.tag];
  slot.busy = false;
  free_slots_.push_back(static_cast<uint32_t>(completion.tag));
  const IoRequest& r = slot.request;
  if (completion.result != static_cast<int64_t>(r.length)) {
    return device_.RequestError(r, completion.result);
  }
  if (shared.book != nullptr) {
    if (r.op == IoOp::kWrite) shared.book->Written(r.offset, r.length, slot.generation);
    if (r.op == IoOp::kRead && shared.book->Check(r.buffer, r.offset, r.length, "read") > 0) {
      return absl::DataLossError(common::StrCat("verify: a read of ", r.length, " bytes at offset ",
                                                r.offset, " on ", device_.Describe(),
                                                " found data that is not what was written"));
    }
  }
  if (!shared.measuring.load(std::memory_order_acquire)) return absl::OkStatus();
  if (read_ == nullptr) AddRecorders(shared);
  const uint64_t latency = static_cast<uint64_t>(std::max<int64_t>(0, now - slot.submitted_mono));
  switch (r.op) {
    case IoOp::kRead:
      read_->Record(now, latency, r.length);
      break;
    case IoOp::kWrite:
      write_->Record(now, latency, r.length);
      break;
    case IoOp::kFsync:
    case IoOp::kFdatasync:
      flush_->Record(now, latency, 0);
      break;
  }
  return absl::OkStatus();
}

common::Status RandioJob::Run(const JobShared& shared) {
  const common::Clock& clock = shared.clock;
  // fio's startdelay: nothing is issued before the job's start.
  while (shared.start_mono != 0 &&
         (clock.MonotonicNanos() < shared.start_mono ||
          (shared.start_measured && !shared.measuring.load(std::memory_order_acquire)))) {
    if (shared.cancelled.load(std::memory_order_relaxed)) {
      queue_.reset();
      return absl::CancelledError("randio: aborted");
    }
    // Until the start, in slices; then briefly, while the region restarts.
    const int64_t left = shared.start_mono - clock.MonotonicNanos();
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(left > 0 ? std::min<int64_t>(left, 20'000'000) : 50'000));
  }
  OffsetSource source(plan_.offsets);
  const uint32_t depth = plan_.iodepth;
  const size_t submit_max = plan_.batch_submit == 0 ? depth : plan_.batch_submit;
  const size_t complete_max =
      std::min<size_t>(depth, plan_.batch_complete_max == 0 ? depth : plan_.batch_complete_max);
  const size_t complete_min =
      std::min<size_t>(complete_max, std::max<uint32_t>(1, plan_.batch_complete_min));
  const uint32_t low = plan_.iodepth_low == 0 ? depth : std::min(plan_.iodepth_low, depth);
  const uint32_t think_blocks = std::max<uint32_t>(1, plan_.think_blocks);
  std::vector<IoRequest> batch;
  std::vector<uint32_t> batch_slots;
  std::vector<IoCompletion> completions(complete_max);
  batch.reserve(depth);
  batch_slots.reserve(depth);

  RandioIo pending;
  bool have_pending = false;
  bool issuing = true;
  bool flush_due = false;
  bool end_flush_done = !plan_.end_fsync;
  bool flush_full = false;   // The due flush is end_fsync's: an fsync whatever the plan's kind.
  bool refill_held = false;  // The queue filled up: wait for it to drain to iodepth_low.
  uint32_t writes_since_flush = 0;
  uint32_t since_think = 0;
  bool think_due = false;
  uint64_t issued_ops = 0, issued_bytes = 0;
  const int64_t rate_start = clock.MonotonicNanos();
  common::Status error;

  // Read after each reap (or wait), and used until the next: two clock readings per I/O,
  // one at submission and one at completion, as fio takes.
  int64_t now = rate_start;
  while (true) {
    if (shared.cancelled.load(std::memory_order_relaxed)) {
      error = absl::CancelledError("randio: aborted");
      break;
    }
    if (shared.deadline_mono != 0 && now >= shared.deadline_mono && issuing) {
      issuing = false;
      flush_due = false;  // A flush after the deadline would stretch the timed region.
    }
    if (!issuing && !end_flush_done && !flush_due && writes_ > 0) {
      // end_fsync: the last write is followed by one fsync, deadline or not.
      end_flush_done = true;
      flush_due = true;
      flush_full = true;
    }
    if (refill_held && queue_->in_flight() <= low) refill_held = false;
    int64_t wait_until = 0;  // When the rate limit lets the next I/O go.
    batch.clear();
    batch_slots.clear();
    while ((issuing || flush_due) && !free_slots_.empty() && !refill_held && !think_due) {
      const uint32_t index = free_slots_.back();
      Slot& slot = slots_[index];
      if (flush_due) {
        slot.request.op = plan_.flush_data_only && !flush_full ? IoOp::kFdatasync : IoOp::kFsync;
        flush_full = false;
        slot.request.offset = 0;
        slot.request.length = 0;
        flush_due = false;
      } else {
        if (!have_pending && !source.Next(&pending)) {
          issuing = false;
          break;
        }
        have_pending = true;
        if (plan_.rate_iops != 0 || plan_.rate_bytes != 0) {
          const int64_t allowed = RateAllowed(rate_start, issued_ops, issued_bytes, pending.length);
          if (allowed > now) {
            wait_until = allowed;
            break;
          }
          if (plan_.rate_poisson) {
            double mean = 0;
            if (plan_.rate_iops != 0) mean = 1e9 / static_cast<double>(plan_.rate_iops);
            if (plan_.rate_bytes != 0) {
              mean = std::max(mean, pending.length * 1e9 / static_cast<double>(plan_.rate_bytes));
            }
            poisson_next_ += static_cast<int64_t>(-std::log(1 - poisson_random_.Unit()) * mean);
          }
        }
        if (shared.book != nullptr && Overlaps(pending, pending.write)) break;
        have_pending = false;
        slot.request.op = pending.write ? IoOp::kWrite : IoOp::kRead;
        slot.request.offset = pending.offset;
        slot.request.length = pending.length;
        if (pending.write) {
          PrepareWrite(slot, shared.book);
          ++writes_;
          if (plan_.flush_every != 0 && ++writes_since_flush == plan_.flush_every) {
            writes_since_flush = 0;
            flush_due = true;
          }
        }
        ++issued_ops;
        issued_bytes += pending.length;
        if (plan_.think_nanos > 0 && ++since_think == think_blocks) {
          since_think = 0;
          think_due = true;
        }
      }
      free_slots_.pop_back();
      slot.busy = true;
      batch.push_back(slot.request);
      batch_slots.push_back(index);
    }
    if (!batch.empty()) {
      const int64_t submitted = clock.MonotonicNanos();
      for (uint32_t index : batch_slots) slots_[index].submitted_mono = submitted;
      // iodepth_batch_submit: at most that many per call to the kernel. A failed call started
      // none of its requests: their slots, and those of the calls not made, go back.
      size_t taken = 0;
      while (taken < batch.size()) {
        const size_t n = std::min(batch.size() - taken, submit_max);
        error = queue_->Submit(std::span<const IoRequest>(batch).subspan(taken, n));
        if (!error.ok()) break;
        taken += n;
      }
      if (!error.ok()) {
        for (size_t i = taken; i < batch.size(); ++i) {
          slots_[batch_slots[i]].busy = false;
          free_slots_.push_back(batch_slots[i]);
        }
        break;
      }
      if (free_slots_.empty() && low < depth) refill_held = true;
    }
    if (queue_->in_flight() == 0) {
      if (think_due) {
        // thinktime: the queue has drained; the job idles with nothing in flight.
        think_due = false;
        if (!Think(shared)) {
          error = absl::CancelledError("randio: aborted");
          break;
        }
        now = clock.MonotonicNanos();
        continue;
      }
      if (!issuing && !flush_due) {
        if (end_flush_done || writes_ == 0) break;
        continue;  // The top of the loop issues end_fsync's flush.
      }
      if (wait_until > 0) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(
            std::min<int64_t>(wait_until - clock.MonotonicNanos(), 20'000'000)));
      }
      now = clock.MonotonicNanos();
      continue;
    }
    const int64_t timeout = wait_until > 0 ? std::max<int64_t>(0, wait_until - now) : -1;
    // Waiting for more than is in flight would wait for ever: with thinktime or a held refill,
    // the queue drains below complete_min.
    auto reaped =
        queue_->Reap(std::min<size_t>(complete_min, queue_->in_flight()), completions, timeout);
    if (!reaped.ok()) {
      error = reaped.status();
      break;
    }
    now = clock.MonotonicNanos();
    for (size_t i = 0; i < *reaped; ++i) {
      common::Status s = Complete(completions[i], now, shared);
      if (!s.ok() && error.ok()) error = s;
    }
    if (*reaped > 0) done_mono_ = now;
    if (!error.ok()) break;
  }
  if (done_mono_ == 0) done_mono_ = clock.MonotonicNanos();
  // Requests still in flight finish (or fail) before the buffers may go; the queue waits.
  queue_.reset();
  return error;
}

}  // namespace stormark::agent
