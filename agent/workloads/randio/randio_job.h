// One randio job: a thread that keeps its queue `iodepth` deep with the I/Os its OffsetSource
// chooses, until its size is moved or its deadline passes, and records each completion.
//
// Latency is measured from just before a request is submitted to just after its completion is
// reaped (one clock reading per batch each way, as fio does without gtod_reduce). Before the
// shared `measuring` flag is set (the ramp), completions are not recorded.
//
// fio's pacing holds as fio's do_io() has it: a rate limit spaces the submissions evenly (or
// as a Poisson process); thinktime lets the queue drain after every thinktime_blocks
// submissions, then spins and sleeps with nothing in flight; end_fsync adds one fsync after
// the last write, inside the timed region.
#ifndef STORMARK_AGENT_WORKLOADS_RANDIO_RANDIO_JOB_H_
#define STORMARK_AGENT_WORKLOADS_RANDIO_RANDIO_JOB_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "agent/devices/device.h"
#include "agent/devices/io_buffer.h"
#include "agent/workloads/randio/block_verify.h"
#include "agent/workloads/randio/randio_offsets.h"
#include "common/clock.h"
#include "common/random.h"
#include "common/recorder.h"
#include "common/status.h"

namespace stormark::agent {

struct JobPlan {
  uint32_t job = 0;
  OffsetPlan offsets;
  uint32_t iodepth = 1;
  // Flush after every N writes (0: never); fsync or fdatasync.
  uint32_t flush_every = 0;
  bool flush_data_only = true;
  // Per-job limits; 0 means none. Poisson: exponential gaps of the same mean.
  uint64_t rate_iops = 0;
  uint64_t rate_bytes = 0;
  bool rate_poisson = false;
  // Queue batching (RandioSpec's fields of the same names); 0 means the default.
  uint32_t batch_submit = 0;
  uint32_t batch_complete_min = 0;
  uint32_t batch_complete_max = 0;
  uint32_t iodepth_low = 0;
  // Wait this long with nothing in flight after every think_blocks submissions (0 means 1),
  // spinning for the first think_spin_nanos of it.
  int64_t think_nanos = 0;
  int64_t think_spin_nanos = 0;
  uint32_t think_blocks = 0;
  // One fsync after the job's last write, timed as a flush.
  bool end_fsync = false;
  // Data for writes: a seed for the random filler.
  uint64_t data_seed = 1;
};

// What a job shares with the others and the workload.
struct JobShared {
  const common::Clock& clock;
  const std::atomic<bool>& cancelled;
  // Set when the ramp is over; recorders are added to `recorders` only after that.
  const std::atomic<bool>& measuring;
  common::RecorderSet& recorders;
  // When verifying; nullptr otherwise.
  VerifyBook* book;
  // Issue no new I/O after this monotonic instant; 0 means no deadline.
  int64_t deadline_mono;
  // Issue nothing before this monotonic instant (fio's startdelay); 0 means at once. With
  // `start_measured`, wait for `measuring` too: without a ramp, the first I/O is measured.
  int64_t start_mono;
  bool start_measured;
};

class RandioJob {
 public:
  // `device` must outlive the job. The buffers are allocated and the queue is opened here, so
  // that an engine that cannot start, or memory the host cannot give, fails in Prepare rather
  // than in the timed region (RESOURCE_EXHAUSTED for the memory).
  static common::StatusOr<std::unique_ptr<RandioJob>> Create(const JobPlan& plan, Device& device);

  // Runs the job to its end. Returns the first I/O error (naming the device and offset), a
  // verification failure of a read, or CANCELLED.
  common::Status Run(const JobShared& shared);

  // After Run: when the job's last I/O completed (monotonic), and its recorders (nullptr for an
  // op type it never recorded). The flush recorder is not part of the RecorderSet, so that
  // flushes do not count as I/Os in the totals.
  int64_t done_mono() const { return done_mono_; }
  const common::Recorder* read_recorder() const { return read_; }
  const common::Recorder* write_recorder() const { return write_; }
  const common::Recorder* flush_recorder() const { return flush_.get(); }

 private:
  // One request's place in the queue.
  struct Slot {
    IoRequest request;
    int64_t submitted_mono = 0;
    uint32_t generation = 0;  // Of a write, when verifying.
    bool busy = false;
  };

  RandioJob(const JobPlan& plan, Device& device);

  // Fills the buffer of a write: its verify headers, or a stamp per 4 KiB that makes every
  // written block unique (no deduplication), over random data (no compression).
  void PrepareWrite(Slot& slot, VerifyBook* book);
  // True when `io` overlaps a request in flight and one of the two writes: with verify, such
  // a request waits, so that the book always knows what a unit holds.
  bool Overlaps(const RandioIo& io, bool io_writes) const;
  common::Status Complete(const IoCompletion& completion, int64_t now, const JobShared& shared);
  void AddRecorders(const JobShared& shared);
  // When the rate limit lets the operation after `ops` operations of `bytes` go (monotonic),
  // `length` being its size.
  int64_t RateAllowed(int64_t rate_start, uint64_t ops, uint64_t bytes, uint32_t length);
  // Spins, then sleeps, for the plan's think time; false when cancelled meanwhile.
  bool Think(const JobShared& shared);

  const JobPlan plan_;
  Device& device_;
  // The buffers are declared before the queue, so that they outlive requests in flight.
  std::vector<IoBuffer> buffers_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::unique_ptr<IoQueue> queue_;
  uint64_t writes_ = 0;
  // The Poisson process's next submission time, and its generator.
  int64_t poisson_next_ = 0;
  common::Xoshiro256 poisson_random_;
  int64_t done_mono_ = 0;
  common::Recorder* read_ = nullptr;
  common::Recorder* write_ = nullptr;
  std::unique_ptr<common::Recorder> flush_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_RANDIO_RANDIO_JOB_H_
