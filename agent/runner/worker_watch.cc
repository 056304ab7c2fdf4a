#include "agent/runner/worker_watch.h"

#include <algorithm>
#include <vector>

#include "agent/runner/kernel_waits.h"
#include "fmt/format.h"

namespace stormark::agent {
namespace {

double Seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

}  // namespace

WorkerWatch::WorkerWatch(int64_t start_mono, int64_t stalled_io_after_nanos,
                         int64_t stuck_after_nanos, std::string proc_self)
    : stalled_io_after_nanos_(stalled_io_after_nanos),
      stuck_after_nanos_(stuck_after_nanos),
      proc_self_(std::move(proc_self)),
      last_op_mono_(start_mono) {}

void WorkerWatch::Progress(int64_t now, uint64_t ops) {
  if (ops == last_ops_) return;
  last_ops_ = ops;
  last_op_mono_ = now;
}

std::string WorkerWatch::Stalled(int64_t now) const {
  if (now - last_op_mono_ < stalled_io_after_nanos_) return "";
  const std::vector<KernelWait> waits = ThreadsInKernelWait(proc_self_);
  if (waits.empty()) return "";
  return fmt::format("no I/O completed for {:.0f} s while a worker sits in {}",
                     Seconds(now - last_op_mono_), waits.front().Describe());
}

std::string WorkerWatch::Stuck(int64_t now) {
  if (stop_asked_ == 0) stop_asked_ = now;
  if (now - stop_asked_ < stuck_after_nanos_) return "";
  const std::vector<KernelWait> waits = ThreadsInKernelWait(proc_self_);
  if (waits.empty()) return "";
  return fmt::format("{} for {:.0f} s", waits.front().Describe(),
                     Seconds(now - std::min(stop_asked_, last_op_mono_)));
}

}  // namespace stormark::agent
