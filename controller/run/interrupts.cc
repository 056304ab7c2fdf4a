#include "controller/run/interrupts.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

namespace stormark::controller {
namespace {

// ^C, kill, and SIGHUP: the terminal or the ssh session the run was started from went away,
// which must not leave the agents' phases and the embedded agent's directory behind.
sigset_t InterruptSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  return signals;
}

}  // namespace

Interrupts::Interrupts() {
  const sigset_t signals = InterruptSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([this] { Wait(); }).detach();
}

Interrupts::~Interrupts() { SetHandler(nullptr); }

void Interrupts::SetHandler(std::function<void()> handler) {
  absl::MutexLock lock(&mu_);
  handler_ = std::move(handler);
}

void Interrupts::Wait() {
  const sigset_t signals = InterruptSignals();
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (interrupted_.exchange(true)) {
      // A second interrupt: the user insists. Leave now; agents clean up by themselves when
      // their controller goes away.
      std::fprintf(stderr, "\nstormark: interrupted again, exiting\n");
      _exit(130);
    }
    std::fprintf(stderr, "\nstormark: interrupted: aborting the phase on every agent\n");
    absl::MutexLock lock(&mu_);
    if (handler_) handler_();
  }
}

}  // namespace stormark::controller
