#include "agent/workloads/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/strings.h"

extern char** environ;

namespace stormark::agent {
namespace {

constexpr int64_t kPollMillis = 50;

void KeepTail(const char* data, size_t n, size_t limit, std::string* tail) {
  tail->append(data, n);
  if (tail->size() > limit) tail->erase(0, tail->size() - limit);
}

// In the child, between fork and execve: only async-signal-safe calls.
[[noreturn]] void ExecChild(const char* path, char* const* argv, char* const* envp, const char* cwd,
                            int cwd_fd, int out_fd, int err_fd, int report_fd, pid_t parent) {
  auto fail = [report_fd](int err) {
    const ssize_t ignored = write(report_fd, &err, sizeof(err));
    (void)ignored;
    _exit(127);
  };
  setpgid(0, 0);
  // The agent dying (even by SIGKILL) must not leave the command running unwatched.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  // gRPC ignores SIGPIPE in the agent; a shell pipeline needs the default back.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP}) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if ((cwd_fd >= 0 ? fchdir(cwd_fd) : chdir(cwd)) != 0) fail(errno);
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0) fail(errno);
  if (dup2(null_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) fail(errno);
  // Every other descriptor of the agent (sockets, files) stays behind, except report_fd,
  // which is close-on-exec.
  for (int fd = 3; fd < 1024; ++fd) {
    if (fd != report_fd) close(fd);
  }
  execve(path, argv, envp);
  fail(errno);
  _exit(127);
}

}  // namespace

std::string ChildExit::Describe() const {
  switch (how) {
    case How::kTimedOut:
      return "timed out; its process group was killed";
    case How::kCancelled:
      return "aborted; its process group was killed";
    case How::kLost:
      return "killed, but it did not exit (stuck in the kernel?)";
    case How::kExited:
      break;
  }
  if (WIFEXITED(wait_status)) return common::StrCat("exited with status ", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return common::StrCat("killed by signal ", sig, " (", strsignal(sig), ")");
  }
  return "ended oddly";
}

bool ChildExit::Succeeded() const {
  return how == How::kExited && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

common::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(const ChildOptions& options,
                                                                    const common::Clock& clock) {
  if (options.program.empty() || options.argv.empty()) {
    return absl::InvalidArgumentError("no program to run");
  }
  // Everything the child needs is built before fork.
  std::vector<char*> argv;
  for (const std::string& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) envp.push_back(*e);
  for (const std::string& e : options.extra_env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int out[2], err[2], report[2];
  if (pipe2(out, O_CLOEXEC) != 0) return common::ErrnoError("pipe", errno);
  if (pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    close(out[0]);
    close(out[1]);
    return common::ErrnoError("pipe", e);
  }
  if (pipe2(report, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    return common::ErrnoError("pipe", e);
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1], report[0], report[1]}) close(fd);
    return common::ErrnoError("fork", e);
  }
  if (pid == 0) {
    ExecChild(options.program.c_str(), argv.data(), envp.data(), options.cwd.c_str(), options.cwd_fd, out[1], err[1], report[1],
              parent);
  }
  setpgid(pid, pid);  // Also in the parent: no window in which a kill misses the group.
  close(out[1]);
  close(err[1]);
  close(report[1]);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  std::unique_ptr<ChildProcess> child(
      new ChildProcess(pid, out[0], err[0], options.tail_bytes, clock));
  // Without a pidfd (kernels before 5.3) the exit is noticed within one poll interval.
  child->pid_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (n == sizeof(exec_errno)) {
    int status;
    waitpid(pid, &status, 0);
    child->reaped_ = true;
    return absl::FailedPreconditionError(
        common::StrCat("cannot run ", options.program, " in ", options.cwd, ": ",
                       std::strerror(exec_errno)));
  }
  return child;
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    ChildExit ignored;
    KillAndReap(10'000'000'000, &ignored);
  }
  for (int fd : {out_fd_, err_fd_, pid_fd_}) {
    if (fd >= 0) close(fd);
  }
}

void ChildProcess::Drain(int timeout_ms, ChildExit* exit) {
  pollfd fds[3];
  int count = 0;
  if (out_fd_ >= 0) fds[count++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[count++] = {err_fd_, POLLIN, 0};
  // The pidfd becomes readable when the child exits, so the exit is seen at once, not at
  // the next poll timeout: the command's time is not rounded up.
  if (pid_fd_ >= 0 && !reaped_) fds[count++] = {pid_fd_, POLLIN, 0};
  if (count == 0) {
    if (timeout_ms > 0) usleep(static_cast<useconds_t>(timeout_ms) * 1000);
    return;
  }
  if (poll(fds, count, timeout_ms) <= 0) return;
  char buf[16384];
  for (int i = 0; i < count; ++i) {
    if (fds[i].revents == 0 || fds[i].fd == pid_fd_) continue;
    const bool is_out = fds[i].fd == out_fd_;
    const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
    if (n > 0) {
      KeepTail(buf, static_cast<size_t>(n), tail_bytes_, is_out ? &exit->stdout_tail : &exit->stderr_tail);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      close(fds[i].fd);
      (is_out ? out_fd_ : err_fd_) = -1;
    }
  }
}

bool ChildProcess::KillAndReap(int64_t wait_nanos, ChildExit* exit) {
  kill(-pid_, SIGKILL);
  const int64_t give_up = clock_.MonotonicNanos() + wait_nanos;
  for (;;) {
    const pid_t done = wait4(pid_, &exit->wait_status, WNOHANG, &exit->usage);
    if (done == pid_ || (done < 0 && errno == ECHILD)) {
      reaped_ = true;
      exit->exit_mono_nanos = clock_.MonotonicNanos();
      return true;
    }
    if (clock_.MonotonicNanos() >= give_up) return false;
    Drain(static_cast<int>(kPollMillis), exit);
  }
}

ChildExit ChildProcess::Wait(int64_t deadline_mono_nanos, const std::atomic<bool>& cancelled,
                             int64_t kill_wait_nanos) {
  ChildExit exit;
  for (;;) {
    const pid_t done = wait4(pid_, &exit.wait_status, WNOHANG, &exit.usage);
    if (done == pid_) {
      exit.exit_mono_nanos = clock_.MonotonicNanos();
      reaped_ = true;
      break;
    }
    const bool timed_out = deadline_mono_nanos > 0 && clock_.MonotonicNanos() >= deadline_mono_nanos;
    if (timed_out || cancelled) {
      exit.how = timed_out ? ChildExit::How::kTimedOut : ChildExit::How::kCancelled;
      if (!KillAndReap(kill_wait_nanos, &exit)) exit.how = ChildExit::How::kLost;
      break;
    }
    Drain(static_cast<int>(kPollMillis), &exit);
  }
  // What it wrote just before exiting; a descendant holding the pipe open is not waited for.
  kill(-pid_, SIGKILL);
  for (int i = 0; i < 4 && (out_fd_ >= 0 || err_fd_ >= 0); ++i) Drain(25, &exit);
  return exit;
}

}  // namespace stormark::agent
