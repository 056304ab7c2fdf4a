#include "agent/workloads/command.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "agent/executables.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

int64_t TimevalNanos(const timeval& tv) {
  return static_cast<int64_t>(tv.tv_sec) * 1'000'000'000 + static_cast<int64_t>(tv.tv_usec) * 1000;
}

// The last non-empty line of a program's output, for a one-line error.
std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

CommandWorkload::CommandWorkload(const stormark::v1::CommandSpec& spec,
                                 std::unique_ptr<Dir> target, std::string target_dir,
                                 CommandPolicy policy)
    : spec_(spec),
      target_(std::move(target)),
      target_dir_(std::move(target_dir)),
      policy_(std::move(policy)) {
  if (target_) target_->AdoptContents();
}

common::Status CommandWorkload::Prepare(const std::atomic<bool>&, std::vector<std::string>*) {
  const bool shell = !spec_.shell().empty();
  ASSIGN_OR_RETURN(std::string program, FindExecutable(shell ? "/bin/sh" : spec_.argv(0)));
  common::Status allowed = policy_.Check(program);
  if (!allowed.ok()) {
    return shell ? common::Annotate(allowed, "a shell command line runs /bin/sh") : allowed;
  }
  program_ = program;
  if (shell) {
    argv_ = {"sh", "-c", spec_.shell()};
  } else {
    argv_.assign(spec_.argv().begin(), spec_.argv().end());
  }
  return absl::OkStatus();
}

common::Status CommandWorkload::Run(RunContext& ctx) {
  common::Recorder* recorder = ctx.recorders.Add();
  ChildOptions options;
  options.program = program_;
  options.argv = argv_;
  options.cwd = target_ ? target_->Describe("") : "/";
  options.cwd_fd = target_ ? target_->fd() : -1;
  options.extra_env = {common::StrCat("STORMARK_TARGET_DIR=", target_dir_)};
  if (target_) options.extra_env.push_back(common::StrCat("STORMARK_PHASE_DIR=", target_->Describe("")));
  const int64_t start = ctx.clock.MonotonicNanos();
  ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> child, ChildProcess::Start(options, ctx.clock));
  const int64_t deadline =
      spec_.timeout_ms() == 0 ? 0 : start + static_cast<int64_t>(spec_.timeout_ms()) * 1'000'000;
  exit_ = child->Wait(deadline, ctx.cancelled);
  int64_t end = exit_->exit_mono_nanos;
  if (exit_->how == ChildExit::How::kCancelled) return absl::CancelledError("command aborted");
  if (!exit_->Succeeded()) {
    std::string why = common::StrCat("command ", exit_->Describe());
    if (exit_->how == ChildExit::How::kTimedOut) {
      why = common::StrCat("command timed out after ", spec_.timeout_ms() / 1000.0,
                           " s; its process group was killed");
    }
    const std::string last = LastLine(exit_->stderr_tail.empty() ? exit_->stdout_tail
                                                                  : exit_->stderr_tail);
    if (!last.empty()) why += common::StrCat(": ", last);
    return absl::AbortedError(why);
  }
  if (spec_.sync()) {
    const int64_t sync_start = ctx.clock.MonotonicNanos();
    if (target_) {
      RETURN_IF_ERROR(target_->SyncFilesystem());
    } else {
      // A hook has no phase directory: the target's own, which is not written through.
      const int fd = open(target_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) return common::ErrnoError(common::StrCat("open ", target_dir_), errno);
      const int rc = syncfs(fd);
      const int err = errno;
      close(fd);
      if (rc != 0) return common::ErrnoError("syncfs of the target's filesystem", err);
    }
    end = ctx.clock.MonotonicNanos();
    sync_nanos_ = end - sync_start;
  }
  elapsed_nanos_ = end - start;
  recorder->Record(end, static_cast<uint64_t>(elapsed_nanos_), 0);
  succeeded_ = true;
  return absl::OkStatus();
}

CleanupReport CommandWorkload::Cleanup() {
  return target_ ? target_->Cleanup() : CleanupReport();
}

void CommandWorkload::AddToResult(stormark::v1::PhaseResult* result) const {
  auto& resolved = *result->mutable_resolved();
  if (!program_.empty()) resolved["program"] = program_;
  if (!exit_) return;
  resolved["exit_status"] = exit_->Describe();
  resolved["stdout_tail"] = exit_->stdout_tail;
  resolved["stderr_tail"] = exit_->stderr_tail;
  if (!succeeded_) return;  // A failed run is never a timing.
  stormark::v1::Measurement* m = result->add_measurements();
  m->set_name("command");
  m->set_ops(1);
  m->set_elapsed_nanos(elapsed_nanos_);
  m->set_cpu_user_nanos(TimevalNanos(exit_->usage.ru_utime));
  m->set_cpu_system_nanos(TimevalNanos(exit_->usage.ru_stime));
  m->set_too_fast(elapsed_nanos_ > 0 && elapsed_nanos_ < 500'000'000);
  resolved["sync_nanos"] = std::to_string(sync_nanos_);
  resolved["max_rss_kib"] = std::to_string(exit_->usage.ru_maxrss);
}

}  // namespace stormark::agent
