#include "controller/run/full_phase.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/strings.h"

namespace stormark::controller {

using stormark::v1::PhaseResult;

void CutToSummary(PhaseResult* result) {
  // What is kept is copied into a new message rather than the rest cleared, so that a field
  // added to PhaseResult later leaves memory too unless it is named here.
  PhaseResult kept;
  kept.set_state(result->state());
  kept.set_error(std::move(*result->mutable_error()));
  kept.set_bytes(result->bytes());
  kept.set_ops(result->ops());
  kept.set_start_unix_nanos(result->start_unix_nanos());
  kept.set_end_unix_nanos(result->end_unix_nanos());
  kept.set_elapsed_nanos(result->elapsed_nanos());
  kept.set_start_late_nanos(result->start_late_nanos());
  kept.set_cpu_user_nanos(result->cpu_user_nanos());
  kept.set_cpu_system_nanos(result->cpu_system_nanos());
  // Copied, not swapped: a copy holds its buckets without the slack they grew with.
  *kept.mutable_latency() = result->latency();
  kept.mutable_warnings()->Swap(result->mutable_warnings());
  kept.set_first_done_nanos(result->first_done_nanos());
  kept.set_first_done_bytes(result->first_done_bytes());
  kept.set_first_done_ops(result->first_done_ops());
  kept.set_last_done_nanos(result->last_done_nanos());
  kept.set_stuck_worker(std::move(*result->mutable_stuck_worker()));
  *result = PhaseResult();  // Frees the rest now, not when `kept` replaces it.
  result->Swap(&kept);
}

void CutSeries(PhaseResult* result) {
  result->clear_series();
  for (auto& m : *result->mutable_measurements()) m.clear_series();
  for (auto& job : *result->mutable_jobs()) {
    for (auto& m : *job.mutable_measurements()) m.clear_series();
  }
  result->clear_threads();
}

void CutPhaseToSummaries(RunRecord* run, size_t index) {
  for (HostOutcome& host : run->phases[index].hosts) {
    if (!host.result) continue;
    CutToSummary(&*host.result);
    host.result_trimmed = true;
  }
}

FullPhase::FullPhase(const RunRecord& run, size_t index) : phase_(&run.phases[index]) {
  const std::vector<HostOutcome>& hosts = phase_->hosts;
  if (std::none_of(hosts.begin(), hosts.end(),
                   [](const HostOutcome& h) { return h.result_trimmed; })) {
    return;
  }
  std::vector<std::string> packed;
  auto results = run.read_back ? run.read_back(index, &packed)
                               : common::StatusOr<std::vector<std::optional<PhaseResult>>>(
                                     absl::FailedPreconditionError("nothing to read them from"));
  if (!results.ok()) {
    status_ = common::Annotate(results.status(),
                               common::StrCat("reading the results of phase ", index + 1, " back"));
    return;
  }
  copy_ = *phase_;
  for (size_t h = 0; h < copy_->hosts.size(); ++h) {
    HostOutcome& host = copy_->hosts[h];
    if (!host.result || !host.result_trimmed) continue;
    // A file changed under the run (rows deleted or edited): the trimmed result stands.
    if (h >= results->size() || !(*results)[h]) {
      status_ = absl::DataLossError(common::StrCat("the results database no longer holds the ",
                                                   "result of host ", host.host, " in phase ",
                                                   index + 1));
      continue;
    }
    if ((*results)[h]->state() != host.result->state()) {
      status_ = absl::DataLossError(common::StrCat("the results database holds another result of ",
                                                   "host ", host.host, " in phase ", index + 1,
                                                   " than the run had"));
      continue;
    }
    host.result = std::move((*results)[h]);
    if (h < packed.size()) host.packed_series = std::move(packed[h]);
    host.result_trimmed = false;
  }
}

}  // namespace stormark::controller
