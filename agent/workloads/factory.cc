#include "agent/workloads/factory.h"

#include "common/strings.h"
#include "agent/targets/dir/dir_target.h"
#include "agent/targets/target_caps.h"
#include "agent/workloads/bonnie.h"
#include "agent/workloads/command.h"
#include "agent/workloads/postmark.h"
#include "agent/workloads/randio.h"
#include "agent/workloads/stream.h"
#include "common/log_text.h"
#include "common/spec_check.h"

namespace stormark::agent {

std::vector<std::string> KnownWorkloads() {
  return {"stream", "bonnie", "command", "postmark", "randio"};
}

namespace {

// The filesystem holding a dir target, or a block target's file (for the tmpfs warnings); ""
// for the other kinds. `block`: the target as the phase resolved it, or null.
std::string FilesystemOf(const TargetConfig& target, const BlockTarget* block = nullptr) {
  if (!CapsOf(target).local_path) return "";
  return ReadTargetFacts(target, SystemPaths(), block != nullptr ? block->fd() : -1)
      .filesystem();
}

// bonnie, postmark and command create files: they need a directory.
common::Status NeedsDir(const TargetConfig& target, std::string_view workload) {
  if (CapsOf(target).files) return absl::OkStatus();
  return absl::InvalidArgumentError(common::StrCat(
      workload, " runs on a dir target; '", target.name, "' is a ", target.kind,
      " target (block workloads such as randio run there)"));
}

}  // namespace

common::StatusOr<std::unique_ptr<Workload>> MakeWorkload(const stormark::v1::PhaseSpec& spec,
                                                         const AgentConfig& config,
                                                         const HostFacts& host,
                                                         const WrittenPrefix& earlier,
                                                         std::shared_ptr<BlockTarget> block) {
  RETURN_IF_ERROR(common::CheckName("phase id", spec.phase_id()));
  const TargetConfig* target = config.FindTarget(spec.target());
  if (target == nullptr) {
    return absl::NotFoundError(common::StrCat("target '", common::LogSafe(spec.target()),
                                            "' is not configured on this agent (configured: ",
                                            config.TargetNames(), ")"));
  }
  switch (spec.workload_case()) {
    case stormark::v1::PhaseSpec::kStream: {
      RETURN_IF_ERROR(StreamWorkload::Validate(spec.stream()));
      if (!CapsOf(*target).files) {
        // A block, null or network target: its device, used in place.
        return std::unique_ptr<Workload>(new StreamWorkload(
            spec.stream(), *target, FilesystemOf(*target, block.get()), earlier, block));
      }
      ASSIGN_OR_RETURN(auto dir, OpenPhaseDir(*target, spec.phase_id()));
      return std::unique_ptr<Workload>(
          new StreamWorkload(spec.stream(), *target, std::move(dir), FilesystemOf(*target)));
    }
    case stormark::v1::PhaseSpec::kBonnie: {
      RETURN_IF_ERROR(common::CheckBonnieSpec(spec.bonnie()));
      RETURN_IF_ERROR(NeedsDir(*target, "bonnie"));
      ASSIGN_OR_RETURN(auto dir, OpenPhaseDir(*target, spec.phase_id()));
      const std::string filesystem = ReadTargetFacts(*target).filesystem();
      return std::unique_ptr<Workload>(
          new BonnieWorkload(spec.bonnie(), std::move(dir), host, filesystem));
    }
    case stormark::v1::PhaseSpec::kCommand: {
      RETURN_IF_ERROR(common::CheckCommandSpec(spec.command()));
      // Refused by policy before the phase directory is made (Prepare decides again).
      RETURN_IF_ERROR(config.commands.Approve(spec.command()).status());
      if (!spec.command().hook()) RETURN_IF_ERROR(NeedsDir(*target, "command"));
      std::unique_ptr<Dir> dir;
      if (!spec.command().hook()) {
        ASSIGN_OR_RETURN(dir, OpenPhaseDir(*target, spec.phase_id()));
      }
      return std::unique_ptr<Workload>(
          new CommandWorkload(spec.command(), std::move(dir), target->path, config.commands));
    }
    case stormark::v1::PhaseSpec::kPostmark: {
      RETURN_IF_ERROR(common::CheckPostmarkSpec(spec.postmark()));
      RETURN_IF_ERROR(NeedsDir(*target, "postmark"));
      ASSIGN_OR_RETURN(auto dir, OpenPhaseDir(*target, spec.phase_id()));
      const std::string filesystem = ReadTargetFacts(*target).filesystem();
      return std::unique_ptr<Workload>(
          new PostmarkWorkload(spec.postmark(), std::move(dir), host, filesystem));
    }
    case stormark::v1::PhaseSpec::kRandio: {
      RETURN_IF_ERROR(common::CheckRandioSpec(spec.randio()));
      std::unique_ptr<Dir> dir;
      if (CapsOf(*target).files) {
        ASSIGN_OR_RETURN(dir, OpenPhaseDir(*target, spec.phase_id()));
      }
      return std::unique_ptr<Workload>(
          new RandioWorkload(spec.randio(), *target, std::move(dir), host,
                             FilesystemOf(*target, block.get()), std::move(block)));
    }
    case stormark::v1::PhaseSpec::WORKLOAD_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("phase names no workload this agent knows");
}

}  // namespace stormark::agent
