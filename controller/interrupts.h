// SIGINT, SIGTERM and SIGHUP for the controller: taken by one thread with sigwait, which calls the
// handler registered now (to abort the phase on every agent). No global state: the object
// lives in main.
#ifndef STORMARK_CONTROLLER_INTERRUPTS_H_
#define STORMARK_CONTROLLER_INTERRUPTS_H_

#include <atomic>
#include <functional>
#include <mutex>

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
  void SetHandler(std::function<void()> handler);
  bool interrupted() const { return interrupted_; }

 private:
  void Wait();

  std::mutex mu_;
  std::function<void()> handler_;  // Guarded by mu_.
  std::atomic<bool> interrupted_{false};
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_INTERRUPTS_H_
