#include "controller/workloads/workload_kinds.h"

#include <algorithm>

#include "nlohmann/json.hpp"

#include "common/spec_check.h"
#include "common/strings.h"
#include "controller/fleet.h"
#include "controller/summary.h"
#include "controller/workloads/bonnie_params.h"
#include "controller/workloads/bonnie_report.h"
#include "controller/workloads/command_params.h"
#include "controller/workloads/command_report.h"
#include "controller/workloads/postmark_config.h"
#include "controller/workloads/postmark_params.h"
#include "controller/workloads/postmark_report.h"
#include "controller/workloads/randio_params.h"
#include "controller/workloads/randio_report.h"
#include "controller/workloads/stream_params.h"

namespace stormark::controller {
namespace {

using common::Status;
using stormark::v1::PhaseSpec;

// The succeeded hosts' results, labelled by host.
std::vector<std::pair<std::string, stormark::v1::PhaseResult>> SucceededHosts(
    const PhaseOutcome& outcome) {
  std::vector<std::pair<std::string, stormark::v1::PhaseResult>> rows;
  for (const HostOutcome& host : outcome.hosts) {
    if (host.succeeded()) rows.emplace_back(host.host, *host.result);
  }
  return rows;
}

WorkloadKind Stream() {
  return {
      .name = "stream",
      .options = StreamOptions,
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_stream();
            StreamOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckStreamSpec(spec.stream()); },
      .describe = [](const PhaseSpec& spec) { return DescribeStream(spec.stream()); },
      .expected_bytes = [](const PhaseSpec& spec) { return spec.stream().size_bytes(); },
      .table = nullptr,
      .json = [](const PhaseSpec& spec) { return StreamSpecJson(spec.stream()); },
  };
}

WorkloadKind Bonnie() {
  return {
      .name = "bonnie",
      .options = BonnieOptions,
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_bonnie();
            BonnieOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckBonnieSpec(spec.bonnie()); },
      .describe = [](const PhaseSpec& spec) { return DescribeBonnie(spec.bonnie()); },
      .expected_bytes = [](const PhaseSpec&) -> uint64_t { return 0; },
      .table =
          [](const PhaseOutcome& outcome, const PhaseSummary&) {
            // bonnie++'s own layout, one row per host, so the figures read as bonnie++'s do.
            return BonnieTextTable(SucceededHosts(outcome));
          },
      .json = [](const PhaseSpec& spec) { return BonnieSpecJson(spec.bonnie()); },
  };
}

WorkloadKind Postmark() {
  return {
      .name = "postmark",
      .options = PostmarkOptions,
      // PostMark's defaults, written out so that plans and reports show them.
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_postmark();
            PostmarkOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckPostmarkSpec(spec.postmark()); },
      .describe = [](const PhaseSpec& spec) { return DescribePostmark(spec.postmark()); },
      // What a run moves depends on its choices; the progress line shows bytes without a bar.
      .expected_bytes = [](const PhaseSpec&) -> uint64_t { return 0; },
      .table =
          [](const PhaseOutcome& outcome, const PhaseSummary&) {
            return PostmarkPhaseReport(
                SucceededHosts(outcome),
                outcome.plan.spec.postmark().report() == stormark::v1::PostmarkSpec::TERSE);
          },
      .load_config =
          [](const std::string& path, const PhaseSpec& spec,
             std::vector<std::string>* notes) -> common::StatusOr<std::vector<PhaseSpec>> {
        ASSIGN_OR_RETURN(PostmarkConfig config, LoadPostmarkConfig(path, spec.postmark()));
        notes->insert(notes->end(), config.notes.begin(), config.notes.end());
        std::vector<PhaseSpec> specs;
        for (const stormark::v1::PostmarkSpec& run : config.runs) {
          PhaseSpec one = spec;
          *one.mutable_postmark() = run;
          specs.push_back(std::move(one));
        }
        return specs;
      },
  };
}

WorkloadKind Command() {
  return {
      .name = "command",
      .options = CommandOptions,
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_command();
            CommandOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckCommandSpec(spec.command()); },
      .describe = [](const PhaseSpec& spec) { return DescribeCommand(spec.command()); },
      .expected_bytes = [](const PhaseSpec&) -> uint64_t { return 0; },
      .table = CommandTable,
  };
}

WorkloadKind Randio() {
  return {
      .name = "randio",
      .options = RandioOptions,
      .init =
          [](PhaseSpec* spec) {
            spec->mutable_randio();
            RandioOptions().Init(spec);
          },
      .validate = [](const PhaseSpec& spec) { return common::CheckRandioSpec(spec.randio()); },
      .describe = [](const PhaseSpec& spec) { return DescribeRandio(spec.randio()); },
      .expected_bytes =
          [](const PhaseSpec& spec) -> uint64_t {
        const auto& r = spec.randio();
        if (r.time_based()) return 0;
        return r.size_bytes() * std::max<uint32_t>(1, r.numjobs());
      },
      .table = RandioTable,
  };
}

}  // namespace

const std::vector<WorkloadKind>& WorkloadKinds() {
  static const std::vector<WorkloadKind>* const kinds =
      new std::vector<WorkloadKind>{Stream(), Bonnie(), Command(), Postmark(), Randio()};
  return *kinds;
}

const WorkloadKind* FindWorkloadKind(std::string_view name) {
  for (const WorkloadKind& kind : WorkloadKinds()) {
    if (kind.name == name) return &kind;
  }
  return nullptr;
}

const WorkloadKind* KindOf(const PhaseSpec& spec) {
  const std::string_view name = common::WorkloadName(spec);
  return name.empty() ? nullptr : FindWorkloadKind(name);
}

std::string WorkloadNames() {
  std::string names;
  for (const WorkloadKind& kind : WorkloadKinds()) {
    names += common::StrCat(names.empty() ? "" : ", ", kind.name);
  }
  return names;
}

}  // namespace stormark::controller
