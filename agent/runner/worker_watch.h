// Watches a worker thread that does a phase's I/O for calls that do not come back: I/O that
// stalled (nothing completed for long while a thread sits in the kernel), and a worker that
// was told to stop but is still in the kernel long after (stuck in state D, as on a dead
// network disk). The phase slot (phase_runner.h) polls it while it waits for a worker.
//
// Not thread-safe: one waiting thread owns it.
#ifndef STORMARK_AGENT_RUNNER_WORKER_WATCH_H_
#define STORMARK_AGENT_RUNNER_WORKER_WATCH_H_

#include <cstdint>
#include <string>

namespace stormark::agent {

class WorkerWatch {
 public:
  // `start_mono` is when the worker began; `proc_self` is /proc/self except in tests.
  WorkerWatch(int64_t start_mono, int64_t stalled_io_after_nanos, int64_t stuck_after_nanos,
              std::string proc_self);

  // The worker had completed `ops` operations by `now`.
  void Progress(int64_t now, uint64_t ops);

  // Why the worker should be stopped, when nothing completed for stalled_io_after while a
  // thread of the process sits in the kernel ("no I/O completed for 130 s while a worker
  // sits in pwrite64 on /srv/f"); else "".
  std::string Stalled(int64_t now) const;

  // Called at every poll once the worker has been told to stop (the first call notes when).
  // Once it has not come back for stuck_after while a thread sits in the kernel, returns
  // what it is stuck in and for how long ("pwrite64 on /srv/f for 12 s"); else "".
  std::string Stuck(int64_t now);

 private:
  const int64_t stalled_io_after_nanos_;
  const int64_t stuck_after_nanos_;
  const std::string proc_self_;
  uint64_t last_ops_ = 0;
  int64_t last_op_mono_;    // When the last operation completed (or the worker began).
  int64_t stop_asked_ = 0;  // When the worker was told to stop; 0 before.
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RUNNER_WORKER_WATCH_H_
