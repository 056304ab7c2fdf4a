// SIGINT, SIGTERM and SIGHUP for the controller: taken by one thread with sigwait, which calls the
// handler registered now (to abort the phase on every agent). No global state: the object
// lives in main.
#ifndef STORMARK_CONTROLLER_RUN_INTERRUPTS_H_
#define STORMARK_CONTROLLER_RUN_INTERRUPTS_H_

#include <atomic>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace stormark::controller {

class Interrupts {
 public:
  // Blocks SIGINT, SIGTERM and SIGHUP in this thread (and so in every thread started later), and
  // starts the thread that waits for them. Call first thing in main.
  Interrupts();
  // The waiting thread is detached: it never outlives the process's use of handlers,
  // because the destructor clears the handler.
  ~Interrupts();

  // Replaces the handler; pass nullptr to remove it. Thread-safe.
  void SetHandler(std::function<void()> handler) ABSL_LOCKS_EXCLUDED(mu_);
  bool interrupted() const { return interrupted_; }

 private:
  // Calls the handler with mu_ held, so that SetHandler waits for a call under way.
  void Wait() ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex mu_;
  std::function<void()> handler_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> interrupted_{false};
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_INTERRUPTS_H_
