// `command`: times a real job on the target (extracting an archive, a build, `dd; sync`), as
// the reference posts did by hand with `time`.
//
// The program runs in the phase's directory on the target (<dir>/.stormark-<phase>/), which
// Cleanup removes with everything the program left in it. The environment adds the facts of
// this host's target (TargetEnvironment): STORMARK_TARGET (its name), STORMARK_TARGET_DIR
// (the configured directory), STORMARK_TARGET_DEVICE (the config's `device:`, never a guess
// from what is mounted; empty when it names none), STORMARK_TARGET_MOUNTED (yes when the
// directory is the root of a filesystem of its own now, no otherwise), STORMARK_TARGET_FS
// (the type of the filesystem holding it now), STORMARK_HOST (this host's name), and for a
// command STORMARK_PHASE_DIR. The timed region is from
// the fork to the program's exit, plus a syncfs() of the target's filesystem when `sync` is
// set (as `time (cmd; sync)`).
//
// The result holds one Measurement, "command": its wall time, and the CPU time of the
// program and every descendant it waited for (not the agent's). `resolved` holds
// exit_status, program, sync_nanos, max_rss_kib, stdout_tail and stderr_tail (the last
// 4 KiB of each). A program that fails (non-zero exit, a signal, a timeout) fails the phase
// with its exit status and the tail of its stderr: a failed run is never a timing.
//
// A hook (a plan's setup or teardown: mkfs, mount, mdadm) runs the same way, but in "/" and
// without a phase directory, so that it can unmount and remount the target.
//
// Commands run only where the agent's config allows them, and only argument vectors its
// allow-list matches (CommandPolicy); Prepare refuses otherwise, naming the setting. They
// run as the config's commands.user (nobody by default; agent/config/credentials.h): Prepare gives
// the phase directory, and only it, to that user (fchown of its descriptor), and the child
// starts in it through that descriptor. `resolved` then also holds "user". A command that
// fails for want of privilege as a user other than root says that commands.user: root is
// what formats and mounts filesystems.
#ifndef STORMARK_AGENT_WORKLOADS_COMMAND_COMMAND_H_
#define STORMARK_AGENT_WORKLOADS_COMMAND_COMMAND_H_

#include <memory>
#include <optional>
#include <string>

#include "agent/config/config.h"
#include "agent/config/credentials.h"
#include "agent/dir/dir.h"
#include "agent/workloads/command/child_process.h"
#include "agent/workloads/workload.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// The STORMARK_TARGET* and STORMARK_HOST variables of a command or hook on `configured`, as
// they are now ("NAME=value").
std::vector<std::string> TargetEnvironment(const TargetConfig& configured);

class CommandWorkload final : public Workload {
 public:
  // `target` is null for a hook (spec.hook()), which runs in "/" and makes no phase
  // directory; `configured` is the target's config entry either way.
  CommandWorkload(const stormark::v1::CommandSpec& spec, std::unique_ptr<Dir> target,
                  const TargetConfig& configured, CommandPolicy policy);

  // Checks the command against the policy, looks up the command user and hands the phase
  // directory to it. Nothing is run.
  common::Status Prepare(const std::atomic<bool>& cancelled,
                         std::vector<std::string>* warnings) override;
  common::Status Run(RunContext& ctx) override;
  CleanupReport Cleanup() override;
  void AddToResult(stormark::v1::PhaseResult* result) const override;

 private:
  const stormark::v1::CommandSpec spec_;
  std::unique_ptr<Dir> target_;
  const TargetConfig configured_;
  const CommandPolicy policy_;
  // Why a failure as a user other than root may be for want of root; "" otherwise.
  std::string RootHint(std::string_view output) const;

  // From Prepare: the program (see ApprovedCommand), its argv, whom it runs as, and the
  // phase directory's descriptor (none for a hook).
  std::string program_;
  std::vector<std::string> argv_;
  std::optional<Credentials> user_;
  // From Run.
  std::optional<ChildExit> exit_;
  bool succeeded_ = false;
  int64_t elapsed_nanos_ = 0;
  int64_t sync_nanos_ = 0;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_COMMAND_COMMAND_H_
