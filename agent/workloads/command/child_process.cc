#include "agent/workloads/command/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "common/strings.h"

extern char** environ;

namespace stormark::agent {
namespace {

constexpr int64_t kPollMillis = 50;

void KeepTail(const char* data, size_t n, size_t limit, std::string* tail) {
  tail->append(data, n);
  if (tail->size() > limit) tail->erase(0, tail->size() - limit);
}

// What the child was doing when it gave up, reported with its errno through the report pipe.
enum class ChildStep : int {
  kWorkingDirectory = 1,
  kStdio,
  kDescriptors,
  kSetgroups,
  kSetgid,
  kSetuid,
  kRegainedRoot,
  kNoNewPrivs,
  kExec,
};

struct ChildFailure {
  ChildStep step;
  int err;
};

// Everything ExecChild needs, built before the fork.
struct ChildPlan {
  const char* const* candidates;  // The paths to try, in order; null-terminated.
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int cwd_fd;
  int out_fd;
  int err_fd;
  int report_fd;
  pid_t parent;
  const Credentials* user;  // Null: stay the agent.
};

// In the child, between fork and execve: only async-signal-safe calls.
[[noreturn]] void ExecChild(const ChildPlan& plan) {
  int report_fd = plan.report_fd;
  auto fail = [&report_fd](ChildStep step, int err) {
    const ChildFailure failure{step, err};
    const ssize_t ignored = write(report_fd, &failure, sizeof(failure));
    (void)ignored;
    _exit(127);
  };
  setpgid(0, 0);
  // The agent dying (even by SIGKILL) must not leave the command running unwatched.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan.parent) _exit(127);
  // gRPC ignores SIGPIPE in the agent; a shell pipeline needs the default back.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP}) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Still as the agent: the phase directory may lie below one the user cannot search.
  if ((plan.cwd_fd >= 0 ? fchdir(plan.cwd_fd) : chdir(plan.cwd)) != 0) {
    fail(ChildStep::kWorkingDirectory, errno);
  }
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0) fail(ChildStep::kStdio, errno);
  if (dup2(null_fd, 0) < 0 || dup2(plan.out_fd, 1) < 0 || dup2(plan.err_fd, 2) < 0) {
    fail(ChildStep::kStdio, errno);
  }
  // Every other descriptor of the agent (sockets, target devices, the phase directory)
  // stays behind: a command running as another user must not inherit what root opened. The
  // report pipe moves to 3 (close-on-exec) and everything above it is closed.
  if (report_fd != 3) {
    if (dup3(report_fd, 3, O_CLOEXEC) < 0) fail(ChildStep::kDescriptors, errno);
    report_fd = 3;
  }
  if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0) {
    struct rlimit limit {};
    const rlim_t top = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                           ? limit.rlim_cur
                           : 65536;
    for (rlim_t fd = 4; fd < top; ++fd) close(static_cast<int>(fd));
  }
  if (plan.user != nullptr) {
    const Credentials& user = *plan.user;
    if (setgroups(user.groups.size(), user.groups.data()) != 0) fail(ChildStep::kSetgroups, errno);
    if (setresgid(user.gid, user.gid, user.gid) != 0) fail(ChildStep::kSetgid, errno);
    if (setresuid(user.uid, user.uid, user.uid) != 0) fail(ChildStep::kSetuid, errno);
    // The drop must be for good: no saved root id, no capability that lets it back.
    if (setuid(0) == 0 || geteuid() != user.uid || getegid() != user.gid) {
      fail(ChildStep::kRegainedRoot, EPERM);
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(ChildStep::kNoNewPrivs, errno);
  // A change of credentials clears the parent-death signal: set it again, and look again
  // whether the agent is still there.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != plan.parent) _exit(127);
  // As execvp: a candidate that is missing or not searchable is passed over; EACCES is
  // reported if nothing ran and any candidate said so.
  int err = ENOENT;
  for (const char* const* path = plan.candidates; *path != nullptr; ++path) {
    execve(*path, plan.argv, plan.envp);
    if (errno == EACCES) {
      err = EACCES;
    } else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV &&
               errno != ETIMEDOUT) {
      err = errno;
      break;
    }
  }
  fail(ChildStep::kExec, err);
  _exit(127);
}

// The paths the child tries for `program`: itself when it holds a '/', else each PATH entry.
std::vector<std::string> Candidates(const std::string& program) {
  if (program.find('/') != std::string::npos) return {program};
  const char* path_env = getenv("PATH");
  const std::string path =
      path_env != nullptr && *path_env != '\0' ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> candidates;
  // An empty entry (the working directory, to POSIX) is skipped: the phase directory holds
  // what the command wrote, not programs to find.
  for (std::string_view dir : common::Split(path, ':')) {
    if (!dir.empty()) candidates.push_back(common::StrCat(dir, "/", program));
  }
  return candidates;
}

bool IsEnvOf(const char* entry, std::string_view name) {
  return std::string_view(entry).starts_with(name) && entry[name.size()] == '=';
}

// One line for a child that did not get as far as running the program.
std::string DescribeFailure(const ChildOptions& options, const ChildFailure& failure) {
  const bool switching = options.user && options.user->switch_user;
  const std::string as_user = switching ? common::StrCat(" as user '", options.user->name,
                                                         "' (uid ", options.user->uid, ")")
                                        : "";
  const std::string why = std::strerror(failure.err);
  switch (failure.step) {
    case ChildStep::kWorkingDirectory:
      return common::StrCat("cannot run ", options.program, ": working directory ", options.cwd,
                            ": ", why);
    case ChildStep::kStdio:
    case ChildStep::kDescriptors:
      return common::StrCat("cannot run ", options.program, ": setting up its descriptors: ", why);
    case ChildStep::kSetgroups:
    case ChildStep::kSetgid:
    case ChildStep::kSetuid: {
      const char* call = failure.step == ChildStep::kSetgroups ? "setgroups"
                         : failure.step == ChildStep::kSetgid  ? "setresgid"
                                                               : "setresuid";
      return common::StrCat("cannot run ", options.program, as_user, ": ", call, ": ", why,
                            failure.err == EPERM
                                ? " (switching users needs CAP_SETUID and CAP_SETGID in the agent)"
                                : "");
    }
    case ChildStep::kRegainedRoot:
      return common::StrCat("refusing to run ", options.program, as_user,
                            ": after setresuid the process could still become root");
    case ChildStep::kNoNewPrivs:
      return common::StrCat("cannot run ", options.program, ": PR_SET_NO_NEW_PRIVS: ", why);
    case ChildStep::kExec:
      break;
  }
  const bool searched = options.program.find('/') == std::string::npos;
  return common::StrCat("cannot run ", options.program, searched ? " (searched in PATH)" : "",
                        " in ", options.cwd, as_user, ": ", why);
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
  if (WIFEXITED(wait_status))
    return common::StrCat("exited with status ", WEXITSTATUS(wait_status));
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
  const Credentials* user = options.user && options.user->switch_user ? &*options.user : nullptr;
  std::vector<std::string> user_env;
  if (user != nullptr) {
    user_env = {common::StrCat("HOME=", user->home), common::StrCat("USER=", user->name),
                common::StrCat("LOGNAME=", user->name)};
  }
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (user != nullptr && (IsEnvOf(*e, "HOME") || IsEnvOf(*e, "USER") || IsEnvOf(*e, "LOGNAME"))) {
      continue;
    }
    envp.push_back(*e);
  }
  for (const std::string& e : user_env) envp.push_back(const_cast<char*>(e.c_str()));
  for (const std::string& e : options.extra_env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::vector<std::string> candidates = Candidates(options.program);
  std::vector<const char*> candidate_ptrs;
  for (const std::string& c : candidates) candidate_ptrs.push_back(c.c_str());
  candidate_ptrs.push_back(nullptr);

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
    ExecChild(ChildPlan{candidate_ptrs.data(), argv.data(), envp.data(), options.cwd.c_str(),
                        options.cwd_fd, out[1], err[1], report[1], parent, user});
  }
  setpgid(pid, pid);  // Also in the parent: no window in which a kill misses the group.
  close(out[1]);
  close(err[1]);
  close(report[1]);
  ChildFailure failure{};
  ssize_t n;
  do {
    n = read(report[0], &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  std::unique_ptr<ChildProcess> child(
      new ChildProcess(pid, out[0], err[0], options.tail_bytes, clock));
  // Without a pidfd (kernels before 5.3) the exit is noticed within one poll interval.
  child->pid_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (n == sizeof(failure)) {
    int status;
    waitpid(pid, &status, 0);
    child->reaped_ = true;
    return absl::FailedPreconditionError(DescribeFailure(options, failure));
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
      if (!is_out && !first_line_done_) {
        // Up to its first newline, and at most 1 KiB.
        const std::string_view chunk(buf, static_cast<size_t>(n));
        const size_t newline = chunk.find('\n');
        exit->stderr_first_line.append(chunk.substr(0, newline));
        first_line_done_ = newline != std::string_view::npos;
        if (exit->stderr_first_line.size() >= 1024) {
          exit->stderr_first_line.resize(1024);
          first_line_done_ = true;
        }
      }
      KeepTail(buf, static_cast<size_t>(n), tail_bytes_,
               is_out ? &exit->stdout_tail : &exit->stderr_tail);
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
    const bool timed_out =
        deadline_mono_nanos > 0 && clock_.MonotonicNanos() >= deadline_mono_nanos;
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
