#include "agent/runner/detached_worker.h"

#include <system_error>
#include <thread>

#include "agent/runner/thread_top.h"
#include "common/strings.h"

namespace stormark::agent {

DetachedWorker::DetachedWorker(WorkFn work, LateReturnFn late_return)
    : work_(std::move(work)), late_return_(std::move(late_return)) {}

std::shared_ptr<DetachedWorker> DetachedWorker::Start(WorkFn work, LateReturnFn late_return) {
  std::shared_ptr<DetachedWorker> worker(
      new DetachedWorker(std::move(work), std::move(late_return)));
  try {
    std::thread([worker] { worker->Work(); }).detach();
  } catch (const std::system_error& e) {
    // Out of threads (or memory for one): the work fails at once instead of the agent.
    absl::MutexLock lock(&worker->mu_);
    worker->status_ =
        absl::UnavailableError(common::StrCat("cannot start a worker thread: ", e.what()));
    worker->done_ = true;
  }
  return worker;
}

void DetachedWorker::Work() {
  // The callers catch with a better name for the work; this is the last line of defence.
  common::Status status = CatchAtThreadTop("a phase's worker", work_);
  LateReturnFn late;
  {
    absl::MutexLock lock(&mu_);
    status_ = std::move(status);
    done_ = true;
    if (abandoned_) late = std::move(late_return_);
    calling_late_ = static_cast<bool>(late);
    done_cv_.NotifyAll();
  }
  if (!late) return;
  late();
  absl::MutexLock lock(&mu_);
  calling_late_ = false;
  done_cv_.NotifyAll();
}

bool DetachedWorker::WaitFor(int64_t nanos) {
  absl::MutexLock lock(&mu_);
  return done_cv_.WaitFor(mu_, nanos,
                          [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done_; });
}

bool DetachedWorker::done() const {
  absl::MutexLock lock(&mu_);
  return done_;
}

common::Status DetachedWorker::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

bool DetachedWorker::Abandon() {
  absl::MutexLock lock(&mu_);
  if (done_) return false;
  abandoned_ = true;
  return true;
}

void DetachedWorker::Disown() {
  absl::MutexLock lock(&mu_);
  late_return_ = nullptr;
  done_cv_.Wait(mu_, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !calling_late_; });
}

}  // namespace stormark::agent
