#include "agent/workloads/command/command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "agent/host/sysinfo.h"
#include "agent/targets/dir/dir_target.h"
#include "agent/workloads/fd.h"
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

std::vector<std::string> TargetEnvironment(const TargetConfig& configured) {
  // Whether the directory is a mount point now: a hook that formats the device checks it
  // has mounted it there before it writes, never the root filesystem under an empty dir.
  struct stat self, parent;
  const std::string up = configured.path + "/..";
  const bool mounted = stat(configured.path.c_str(), &self) == 0 &&
                       stat(up.c_str(), &parent) == 0 && self.st_dev != parent.st_dev;
  stormark::v1::TargetInfo facts;
  ReadFilesystemFacts(configured.path, SystemPaths(), -1, &facts);
  struct utsname host;
  const std::string host_name = uname(&host) == 0 ? host.nodename : "";
  return {common::StrCat("STORMARK_TARGET=", configured.name),
          common::StrCat("STORMARK_TARGET_DIR=", configured.path),
          common::StrCat("STORMARK_TARGET_DEVICE=", configured.device),
          common::StrCat("STORMARK_TARGET_MOUNTED=", mounted ? "yes" : "no"),
          common::StrCat("STORMARK_TARGET_FS=", facts.filesystem()),
          common::StrCat("STORMARK_HOST=", host_name)};
}

CommandWorkload::CommandWorkload(const stormark::v1::CommandSpec& spec, std::unique_ptr<Dir> target,
                                 const TargetConfig& configured, CommandPolicy policy)
    : spec_(spec), target_(std::move(target)), configured_(configured), policy_(std::move(policy)) {
  if (target_) target_->AdoptContents();
}

common::Status CommandWorkload::Prepare(const std::atomic<bool>&, std::vector<std::string>*) {
  ASSIGN_OR_RETURN(ApprovedCommand approved, policy_.Approve(spec_));
  ASSIGN_OR_RETURN(Credentials user, LookUpCommandUser(policy_.user));
  if (target_) {
    // The directory this phase created (0700, the agent's), through the Dir's own checked
    // descriptor, given to the command user: only it, nothing above it.
    const std::string dir = target_->Describe("");
    if (user.switch_user && fchown(target_->fd(), user.uid, user.gid) != 0) {
      const int err = errno;
      return common::ErrnoError(
          common::StrCat("cannot give the phase directory ", dir, " to user '", user.name,
                         "' (commands.user)", err == EPERM ? "; the agent needs CAP_CHOWN" : ""),
          err);
    }
  }
  program_ = std::move(approved.program);
  argv_ = std::move(approved.argv);
  user_ = std::move(user);
  return absl::OkStatus();
}

std::string CommandWorkload::RootHint(std::string_view output) const {
  if (!user_ || user_->is_root()) return "";
  static constexpr std::string_view kSigns[] = {"permission denied", "operation not permitted",
                                                "must be superuser", "must be root",
                                                "only root",         "are you root",
                                                "need to be root",   "requires root"};
  std::string lower(output);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  bool denied = false;
  for (std::string_view sign : kSigns) denied = denied || lower.find(sign) != std::string::npos;
  if (!denied) return "";
  return spec_.hook()
             ? common::StrCat(" (the hook ran as user '", user_->name,
                              "'; hooks that format or mount filesystems need 'commands.user: "
                              "root' in the agent's config)")
             : common::StrCat(" (the command ran as user '", user_->name,
                              "', the agent's commands.user)");
}

common::Status CommandWorkload::Run(RunContext& ctx) {
  common::Recorder* recorder = ctx.recorders.Add();
  ChildOptions options;
  options.program = program_;
  options.argv = argv_;
  options.cwd = target_ ? target_->Describe("") : "/";
  options.cwd_fd = target_ ? target_->fd() : -1;
  options.user = user_;
  options.extra_env = TargetEnvironment(configured_);
  if (target_)
    options.extra_env.push_back(common::StrCat("STORMARK_PHASE_DIR=", target_->Describe("")));
  const int64_t start = ctx.clock.MonotonicNanos();
  auto started = ChildProcess::Start(options, ctx.clock);
  if (!started.ok()) {
    // A failed switch or exec names the user already.
    const common::Status& status = started.status();
    const std::string message(status.message());
    if (message.find(" as user '") != std::string::npos) return status;
    return common::Status(status.code(), common::StrCat(message, RootHint(message)));
  }
  std::unique_ptr<ChildProcess> child = std::move(*started);
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
    // The first line of stderr and its last: a tool that fails with a usage text prints the
    // error first and the usage after it.
    const std::string last =
        LastLine(exit_->stderr_tail.empty() ? exit_->stdout_tail : exit_->stderr_tail);
    const std::string first(common::Trim(exit_->stderr_first_line));
    if (!first.empty() && first != last) {
      why += common::StrCat(": ", first, last.empty() ? "" : common::StrCat(" ... ", last));
    } else if (!last.empty()) {
      why += common::StrCat(": ", last);
    }
    why += RootHint(exit_->stderr_tail + exit_->stdout_tail);
    return absl::AbortedError(why);
  }
  if (spec_.sync()) {
    const int64_t sync_start = ctx.clock.MonotonicNanos();
    if (target_) {
      RETURN_IF_ERROR(target_->SyncFilesystem());
    } else {
      // A hook has no phase directory: the target's own, which is not written through.
      ASSIGN_OR_RETURN(Fd dir, OpenTargetDir(configured_.name, configured_.path));
      if (syncfs(dir.get()) != 0) {
        return common::ErrnoError("syncfs of the target's filesystem", errno);
      }
    }
    end = ctx.clock.MonotonicNanos();
    sync_nanos_ = end - sync_start;
  }
  elapsed_nanos_ = end - start;
  recorder->Record(end, static_cast<uint64_t>(elapsed_nanos_), 0);
  succeeded_ = true;
  return absl::OkStatus();
}

CleanupReport CommandWorkload::Cleanup() { return target_ ? target_->Cleanup() : CleanupReport(); }

void CommandWorkload::AddToResult(stormark::v1::PhaseResult* result) const {
  auto& resolved = *result->mutable_resolved();
  if (!program_.empty()) resolved["program"] = program_;
  if (user_) resolved["user"] = user_->name;
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
