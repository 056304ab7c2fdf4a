#include "controller/results/run_journal.h"

#include <system_error>

#include "common/strings.h"
#include "controller/report/validity.h"
#include "controller/results/results_query.h"
#include "controller/run/full_phase.h"

namespace stormark::controller {

void RunJournal::Check(const common::Status& status, std::string_view what) {
  if (status.ok()) return;
  failed_ = true;
  std::fprintf(err_,
               "stormark: results database: cannot record %s: %s (nothing more of this run is "
               "written to it)\n",
               std::string(what).c_str(), std::string(status.message()).c_str());
}

void RunJournal::Begin(const RunRecord& run, const RunStart& start) {
  if (!healthy()) return;
  Check(store_->BeginRun(run, start), common::StrCat("run ", run.run_id));
}

void RunJournal::BeginPhase(const std::string& run_id, size_t index, const PhaseOutcome& phase,
                            size_t hosts) {
  if (!healthy()) return;
  Check(store_->BeginPhase(run_id, index, phase),
        common::StrCat("the start of phase ", index + 1, " '", phase.plan.name, "'"));
  if (!healthy()) return;
  try {
    writer_ = std::make_unique<PhaseWriter>(store_.get(), run_id, index, hosts);
  } catch (const std::system_error&) {
    // No thread for it (the host is out of threads): EndPhase writes every row at the end.
    writer_ = nullptr;
  }
}

Fleet::HostDoneFn RunJournal::host_done() {
  if (writer_ == nullptr) return nullptr;
  return [writer = writer_.get()](size_t i, HostOutcome* host) {
    if (writer->Add(i, host) && host->result) {
      // Series the fleet did not pack are counted here.
      if (host->result->series_size() > 0) host->own_series_samples = host->result->series_size();
      CutSeries(&*host->result);
      host->result_trimmed = true;
    }
  };
}

void RunJournal::EndPhase(const std::string& run_id, size_t index, PhaseOutcome* outcome) {
  const std::string what = common::StrCat("phase ", index + 1, " '", outcome->plan.name, "'");
  std::vector<char> written;
  if (writer_ != nullptr) {
    std::vector<std::pair<size_t, HostOutcome>> unwritten;
    const common::Status status = writer_->Finish(&written, &unwritten);
    writer_.reset();
    // Rows a failed write lost: their results whole again, as the run's outputs need them.
    for (auto& [i, host] : unwritten) {
      outcome->hosts[i].result = std::move(host.result);
      outcome->hosts[i].result_trimmed = false;
    }
    if (healthy()) Check(status, what);
  }
  if (!healthy()) return;
  Check(store_->EndPhase(run_id, index, *outcome, written), what);
}

common::Status RunJournal::ShareWindow(const std::string& run_id, size_t index,
                                       PhaseOutcome* outcome) const {
  return controller::ShareWindow(outcome, [&](const SeriesSampleFn& sample) -> common::Status {
    if (store_ == nullptr) return absl::FailedPreconditionError("no results database");
    return ForEachSeriesSample(*store_, run_id, index, outcome->hosts.size(), sample);
  });
}

common::StatusOr<std::vector<std::optional<stormark::v1::PhaseResult>>> RunJournal::ReadBack(
    const std::string& run_id, size_t index, size_t hosts,
    std::vector<std::string>* packed_series) const {
  if (store_ == nullptr) return absl::FailedPreconditionError("no results database");
  return LoadPhaseResults(*store_, run_id, index, hosts, packed_series);
}

void RunJournal::Events(const RunRecord& run) {
  for (; healthy() && hooks_written_ < run.hooks.size(); ++hooks_written_) {
    const HookOutcome& hook = run.hooks[hooks_written_];
    Check(store_->AddHook(run.run_id, hooks_written_, hook),
          common::StrCat(hook.what, " `", hook.line, "`"));
  }
  for (; healthy() && skipped_written_ < run.skipped_points.size(); ++skipped_written_) {
    Check(
        store_->AddSkippedPoint(run.run_id, skipped_written_, run.skipped_points[skipped_written_]),
        common::StrCat("sweep point ", run.skipped_points[skipped_written_].point));
  }
}

void RunJournal::Finish(const RunRecord& run, int64_t finished_unix_nanos,
                        std::string_view status) {
  Events(run);
  if (!healthy()) return;
  Check(store_->FinishRun(run, finished_unix_nanos, status),
        common::StrCat("the end of run ", run.run_id));
}

}  // namespace stormark::controller
