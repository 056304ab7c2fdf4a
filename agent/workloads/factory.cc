#include "agent/workloads/factory.h"

#include "agent/host/system_paths.h"
#include "agent/workloads/workload_registry.h"
#include "common/log_text.h"
#include "common/spec_check.h"
#include "common/strings.h"

namespace stormark::agent {

std::string TargetFilesystem(const WorkloadInputs& in) {
  if (!in.caps.local_path) return "";
  return ReadTargetFacts(in.target, SystemPaths(), in.block != nullptr ? in.block->fd() : -1)
      .filesystem();
}

common::Status NeedsFiles(std::string_view workload, const TargetConfig& target,
                          const TargetCaps& caps) {
  if (caps.files) return absl::OkStatus();
  return absl::InvalidArgumentError(
      common::StrCat(workload, " runs on a dir target; '", target.name, "' is a ", target.kind,
                     " target (block workloads such as randio run there)"));
}

common::StatusOr<std::unique_ptr<Workload>> MakeWorkload(const stormark::v1::PhaseSpec& spec,
                                                         const AgentConfig& config,
                                                         const HostFacts& host,
                                                         const WrittenPrefix& earlier,
                                                         std::shared_ptr<BlockTarget> block,
                                                         std::unique_ptr<HandedOver>* handed) {
  RETURN_IF_ERROR(common::CheckName("phase id", spec.phase_id()));
  const TargetConfig* target = config.FindTarget(spec.target());
  if (target == nullptr) {
    return absl::NotFoundError(common::StrCat(
        "target '", common::LogSafe(spec.target()),
        "' is not configured on this agent (configured: ", config.TargetNames(), ")"));
  }
  const WorkloadModule* module = FindWorkload(spec);
  if (module == nullptr) {
    return absl::InvalidArgumentError("phase names no workload this agent knows");
  }
  const TargetCaps caps = CapsOf(*target);
  RETURN_IF_ERROR(module->check(spec));
  if (module->check_target != nullptr) {
    RETURN_IF_ERROR(module->check_target(spec, *target, caps));
  }
  return module->make(
      WorkloadInputs{spec, config, *target, caps, host, earlier, std::move(block), handed});
}

}  // namespace stormark::agent
