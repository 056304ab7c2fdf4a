// A piece of a phase's work (its set-up, its timed run) on a thread of its own, which the
// caller may leave behind when the thread is stuck in the kernel: an I/O to a dead disk can
// neither be cancelled nor killed, so the agent answers for it instead of waiting for ever.
// If a left-behind thread ever returns, it calls back so that the phase's files are removed
// and the slot freed (see phase_runner.h).
//
// Thread-safe.
#ifndef STORMARK_AGENT_RUNNER_DETACHED_WORKER_H_
#define STORMARK_AGENT_RUNNER_DETACHED_WORKER_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/monotonic_cond_var.h"
#include "common/status.h"

namespace stormark::agent {

class DetachedWorker {
 public:
  using WorkFn = std::function<common::Status()>;
  using LateReturnFn = std::function<void()>;

  // Runs `work` on a new detached thread, which holds the worker (and so whatever `work`
  // holds) until it returns. An exception that escapes `work` becomes its status
  // (agent/runner/thread_top.h): RESOURCE_EXHAUSTED for an allocation failure. If it returns after
  // Abandon(), it calls `late_return` on that thread, unless Disown() came first.
  static std::shared_ptr<DetachedWorker> Start(WorkFn work, LateReturnFn late_return);

  // Waits at most `nanos` for the work to end; true when it has.
  bool WaitFor(int64_t nanos) ABSL_LOCKS_EXCLUDED(mu_);
  bool done() const ABSL_LOCKS_EXCLUDED(mu_);
  // What the work returned. Only meaningful once done().
  common::Status status() const ABSL_LOCKS_EXCLUDED(mu_);

  // The caller leaves the thread behind. False when the work has ended already: then
  // nothing is left behind and the caller goes on as if it had waited.
  bool Abandon() ABSL_LOCKS_EXCLUDED(mu_);
  // Whoever `late_return` calls back is going away: a late return calls nothing, and one
  // already calling back is waited for. Must not be called with anything held that
  // `late_return` takes.
  void Disown() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  DetachedWorker(WorkFn work, LateReturnFn late_return);
  void Work() ABSL_LOCKS_EXCLUDED(mu_);

  const WorkFn work_;
  mutable absl::Mutex mu_;
  common::MonotonicCondVar done_cv_;
  LateReturnFn late_return_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;
  bool calling_late_ ABSL_GUARDED_BY(mu_) = false;  // While late_return runs.
  common::Status status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RUNNER_DETACHED_WORKER_H_
