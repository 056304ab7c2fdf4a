// A program run by the agent: in its own process group (so that a timeout or an abort stops
// everything it started), with stdin from /dev/null and the last bytes of its stdout and
// stderr kept for the report. It inherits no descriptor of the agent but those three.
//
// With `user`, the child becomes that user before it executes the program: setgroups (the
// user's supplementary groups), setresgid, setresuid, in that order; then it checks that
// setuid(0) fails, and sets PR_SET_NO_NEW_PRIVS (always, also for root), so that no
// set-user-ID program or file capability gives it back more than it has.
//
// Not thread-safe: one owner starts it and waits for it.
#ifndef STORMARK_AGENT_WORKLOADS_COMMAND_CHILD_PROCESS_H_
#define STORMARK_AGENT_WORKLOADS_COMMAND_CHILD_PROCESS_H_

#include <sys/resource.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/config/credentials.h"
#include "common/clock.h"
#include "common/status.h"

namespace stormark::agent {

struct ChildOptions {
  // The program: a path (relative ones from the working directory), or a name without '/'
  // that the child looks for in the agent's PATH as execvp does, after it has become `user`,
  // so that the search shows only what that user may see.
  std::string program;
  // Its arguments, argv[0] first (the name the program sees itself called by).
  std::vector<std::string> argv;
  // The working directory; when cwd_fd >= 0, only its name for errors.
  std::string cwd;
  // When >= 0, the working directory is this directory descriptor (fchdir), so that it is
  // not reached by path again and may lie below directories `user` cannot search. Start
  // does not close it.
  int cwd_fd = -1;
  // Whom the program runs as; nullopt (or switch_user false): as the agent. Switching sets
  // HOME, USER and LOGNAME to the user's.
  std::optional<Credentials> user;
  // "NAME=VALUE" entries added to the agent's environment.
  std::vector<std::string> extra_env;
  // How many of the last bytes of stdout and of stderr to keep.
  size_t tail_bytes = 4096;
};

struct ChildExit {
  enum class How {
    kExited,     // It exited or was killed by a signal of its own; see wait_status.
    kTimedOut,   // The deadline passed; its process group was killed.
    kCancelled,  // `cancelled` was set; its process group was killed.
    kLost,       // Killed, but it did not go away (stuck in the kernel, D state).
  };
  How how = How::kExited;
  // As waitpid returns it (WIFEXITED, WEXITSTATUS, WIFSIGNALED, ...).
  int wait_status = 0;
  // CPU and other resources used by the child and every descendant it waited for.
  struct rusage usage {};
  // Monotonic time when the child was found to have exited.
  int64_t exit_mono_nanos = 0;
  std::string stdout_tail;
  std::string stderr_tail;
  // The first line of stderr (up to 1 KiB of it), which a long usage text would push out of
  // the tail: mkfs prints its real error first.
  std::string stderr_first_line;

  // "exited with status 2", "killed by signal 9 (Killed)", "timed out", ...
  std::string Describe() const;
  bool Succeeded() const;
};

class ChildProcess {
 public:
  // Starts the program. FAILED_PRECONDITION when it cannot be executed, naming the step that
  // failed in the child (the working directory, a credential call, execve) and its errno.
  static common::StatusOr<std::unique_ptr<ChildProcess>> Start(const ChildOptions& options,
                                                               const common::Clock& clock);

  // Kills the process group and reaps the child if Wait was not called to the end.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits for the child to exit, collecting its output, until `deadline_mono_nanos` (0: no
  // deadline) or until `cancelled` is set; then kills the whole process group (SIGKILL) and
  // waits at most `kill_wait_nanos` for the child to go. After the child exits, whatever is
  // left of its process group is killed too, so nothing it started keeps writing to the
  // target. Call once.
  ChildExit Wait(int64_t deadline_mono_nanos, const std::atomic<bool>& cancelled,
                 int64_t kill_wait_nanos = 10'000'000'000);

  pid_t pid() const { return pid_; }

 private:
  ChildProcess(pid_t pid, int out_fd, int err_fd, size_t tail_bytes, const common::Clock& clock)
      : pid_(pid), out_fd_(out_fd), err_fd_(err_fd), tail_bytes_(tail_bytes), clock_(clock) {}
  // Reads what is available from the open pipes, for at most `timeout_ms`.
  void Drain(int timeout_ms, ChildExit* exit);
  // SIGKILL to the whole group, then reap within `wait_nanos`. False if the child stayed.
  bool KillAndReap(int64_t wait_nanos, ChildExit* exit);

  const pid_t pid_;
  int out_fd_;
  int err_fd_;
  int pid_fd_ = -1;
  const size_t tail_bytes_;
  bool first_line_done_ = false;  // ChildExit::stderr_first_line is complete.
  const common::Clock& clock_;
  bool reaped_ = false;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_COMMAND_CHILD_PROCESS_H_
