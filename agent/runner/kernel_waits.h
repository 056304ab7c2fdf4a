// Threads of this process that sit in the kernel in uninterruptible sleep (state D), as a
// thread does whose I/O went to a dead network disk. Such a thread cannot be cancelled or
// killed until the I/O returns, which may be never (axboe/fio#1004); the agent reports it
// instead of waiting for it.
#ifndef STORMARK_AGENT_RUNNER_KERNEL_WAITS_H_
#define STORMARK_AGENT_RUNNER_KERNEL_WAITS_H_

#include <string>
#include <vector>

namespace stormark::agent {

// One thread in state D: what it is doing, as far as /proc tells.
struct KernelWait {
  int tid = 0;
  // The system call it is in ("pread64", "write", "syscall 333"), or "" when /proc does not
  // say (a kernel worker of the process, such as an io_uring one).
  std::string syscall;
  // What its first argument, a file descriptor, refers to ("/dev/dm-3", "/srv/bench/f"), or
  // "" when the call takes none or the link cannot be read.
  std::string file;

  // "pread64 on /dev/dm-3", "fdatasync", "an I/O" when nothing is known.
  std::string Describe() const;
};

// The threads of the process whose /proc directory is `proc_self` ("/proc/self"; tests pass
// a tree of their own) that are in state D now, in tid order. Never fails: what cannot be
// read is left out.
std::vector<KernelWait> ThreadsInKernelWait(const std::string& proc_self = "/proc/self");

// The x86-64 (or aarch64) name of a system call number that does I/O, else "syscall N".
std::string SyscallName(long number);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RUNNER_KERNEL_WAITS_H_
