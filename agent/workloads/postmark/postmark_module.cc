// postmark, as the agent's registry knows it (agent/workloads/workload_module.h).
#include <algorithm>

#include "agent/targets/dir/dir_target.h"
#include "agent/workloads/postmark/postmark.h"
#include "agent/workloads/workload_module.h"
#include "common/workloads/postmark/postmark_spec.h"

namespace stormark::agent::postmark_workload {
namespace {

using stormark::v1::PhaseSpec;

common::StatusOr<std::unique_ptr<Workload>> Make(const WorkloadInputs& in) {
  ASSIGN_OR_RETURN(auto dir, OpenPhaseDir(in.target, in.spec.phase_id()));
  return std::unique_ptr<Workload>(
      new PostmarkWorkload(in.spec.postmark(), std::move(dir), in.host, TargetFilesystem(in)));
}

// Every transaction may create a file of the largest size.
common::StatusOr<uint64_t> DataBytes(const PhaseSpec& spec, const HostFacts&) {
  const stormark::v1::PostmarkSpec p = common::WithPostmarkDefaults(spec.postmark());
  return common::SaturatingMul(uint64_t{p.number()} + p.transactions(), p.max_size_bytes());
}

uint64_t Files(const PhaseSpec& spec) {
  const stormark::v1::PostmarkSpec p = common::WithPostmarkDefaults(spec.postmark());
  return uint64_t{p.number()} + p.transactions();
}

// The initial files, and one more per transaction that creates, at most as many again (the
// file table's 2 x number).
uint64_t LiveFiles(const PhaseSpec& spec) {
  const stormark::v1::PostmarkSpec p = common::WithPostmarkDefaults(spec.postmark());
  return uint64_t{p.number()} + std::min(p.number(), p.transactions());
}

}  // namespace

const WorkloadModule& Module() {
  static constexpr WorkloadModule kModule{
      .name = "postmark",
      .spec_case = PhaseSpec::kPostmark,
      .check = [](const PhaseSpec& spec) { return common::CheckPostmarkSpec(spec.postmark()); },
      .check_target = [](const PhaseSpec&, const TargetConfig& target,
                         const TargetCaps& caps) { return NeedsFiles("postmark", target, caps); },
      .make = Make,
      .data_bytes = DataBytes,
      .files = Files,
      .live_files = LiveFiles,
      .memory = [](const PhaseSpec& spec, const TargetConfig&,
                   const TargetCaps&) { return common::EstimateMemory(spec.postmark()); },
      .too_fast_hint = [](const PhaseSpec&) -> std::string_view { return "use more transactions"; },
  };
  return kModule;
}

}  // namespace stormark::agent::postmark_workload
