#include "controller/results/results_command.h"

#include <algorithm>
#include <memory>

#include "common/atomic_file.h"
#include "common/strings.h"
#include "common/units.h"
#include "controller/report/environment.h"
#include "controller/report/report_baseline.h"
#include "controller/report/report_compare.h"
#include "controller/report/report_gate.h"
#include "controller/report/report_table.h"
#include "controller/report/run_status.h"
#include "controller/results/results_query.h"
#include "controller/results/results_store.h"
#include "controller/results/same_plan.h"
#include "controller/report/summary.h"
#include "controller/report/sweep_table.h"
#include "controller/plan/plan_sweep.h"
#include "controller/report/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;

constexpr int kExitOk = 0;
constexpr int kExitRegression = 1;
constexpr int kExitBadInput = 2;

int Fail(const Status& status, std::FILE* err) {
  std::fprintf(err, "stormark: %s\n", std::string(status.message()).c_str());
  return kExitBadInput;
}

StatusOr<std::unique_ptr<ResultsStore>> OpenStore(const ResultsOptions& options, std::FILE* err) {
  return OpenResultsForReading(options.db_path, err);
}

// "db1:7420, db2:7420 +3": the first two hosts and how many more.
std::string HostsCell(const std::vector<std::string>& hosts) {
  std::string text;
  for (size_t i = 0; i < hosts.size() && i < 2; ++i) {
    text += common::StrCat(i == 0 ? "" : ", ", hosts[i]);
  }
  if (hosts.size() > 2) text += fmt::format(" +{}", hosts.size() - 2);
  return text.empty() ? "-" : text;
}

}  // namespace

int ResultsList(const ResultsOptions& options, std::FILE* out, std::FILE* err) {
  auto store = OpenStore(options, err);
  if (!store.ok()) return Fail(store.status(), err);
  auto runs = ListRuns(**store);
  if (!runs.ok()) return Fail(runs.status(), err);
  if (runs->empty()) {
    std::fprintf(out, "no runs in %s\n", (*store)->path().c_str());
    return kExitOk;
  }
  TextTable table;
  table.AddColumn("run", TextTable::Align::kLeft);
  table.AddColumn("started (UTC)", TextTable::Align::kLeft);
  table.AddColumn("label", TextTable::Align::kLeft);
  table.AddColumn("hosts", TextTable::Align::kLeft);
  table.AddColumn("phases", TextTable::Align::kRight);
  table.AddColumn("status", TextTable::Align::kLeft);
  for (const RunListing& run : *runs) {
    table.AddRow({run.run_id, common::FormatIsoTime(run.started_unix_nanos), run.label,
                  HostsCell(run.hosts),
                  fmt::format("{}/{}", run.recorded_phases, run.planned_phases), run.status});
  }
  std::fputs(table.Render().c_str(), out);
  return kExitOk;
}

int ResultsShow(const ResultsOptions& options, const std::string& ref, std::FILE* out,
                std::FILE* err) {
  if (!options.group_by.empty()) {
    if (Status s = CheckGroupBy(options.group_by); !s.ok()) return Fail(s, err);
  }
  auto store = OpenStore(options, err);
  if (!store.ok()) return Fail(store.status(), err);
  auto run = LoadNamedRun(**store, ref, SeriesKept::kNone);
  if (!run.ok()) return Fail(run.status(), err);
  const TableView view = MakeTableView(options.all_hosts, options.group_by, run->record.agents);
  std::string baseline;
  if (!options.baseline.empty()) {
    auto table = FormatBaselineTables(run->record, options.baseline, view);
    if (!table.ok()) return Fail(table.status(), err);
    baseline = std::move(*table);
  }
  const RunListing& listing = run->listing;
  std::fprintf(out, "run %s  %s  started %s  %s  (stormark %s)\n", listing.run_id.c_str(),
               listing.status.c_str(), common::FormatIsoTime(listing.started_unix_nanos).c_str(),
               listing.label.c_str(), listing.stormark_version.c_str());
  if (listing.status == kRunIncomplete) {
    const size_t cut = run->record.phases.size() - listing.recorded_phases;
    std::fprintf(out,
                 "  incomplete: its controller stopped without ending the run; %zu of %zu "
                 "phases were recorded%s\n",
                 listing.recorded_phases, listing.planned_phases,
                 cut == 0 ? ""
                          : ", and the results that had come in of the phase it stopped in "
                            "(the hosts without one say so)");
  }
  std::fputs(FormatAgentsTable(run->record.agents, view).c_str(), out);
  if (const std::string notes =
          FormatEnvironmentNotes(run->record.agents, Collapses(view, run->record.agents.size()));
      !notes.empty()) {
    std::fprintf(out, "\n%s", notes.c_str());
  }
  std::fputs("\n", out);
  // As `stormark run` printed them: each sweep point's header, each phase's table with its
  // repetition, and the summary of medians a sweep or repeated run ends with.
  const std::vector<PhaseOutcome>& phases = run->record.phases;
  const size_t count = std::max(listing.planned_phases, phases.size());
  const RunRecord& record = run->record;
  int repeat = 1;
  std::vector<std::string> names, points;
  auto add = [](std::vector<std::string>* list, const std::string& item) {
    if (std::find(list->begin(), list->end(), item) == list->end()) list->push_back(item);
  };
  // The points in the order they ran, a point whose phases were all skipped (only its hooks
  // ran) in its place.
  for (size_t p = 0, h = 0; p <= phases.size(); ++p) {
    for (; h < record.hooks.size() && record.hooks[h].before_phase <= p; ++h) {
      add(&points, record.hooks[h].point);
    }
    if (p == phases.size()) break;
    repeat = std::max(repeat, phases[p].plan.repetition + 1);
    add(&names, phases[p].plan.name);
    add(&points, DescribeSweepPoint(phases[p].plan.sweep_point));
  }
  // The plan's number of points: what it planned, when that divides into whole points.
  const size_t per_point = static_cast<size_t>(repeat) * names.size();
  const size_t planned_points = per_point > 0 && listing.planned_phases % per_point == 0
                                    ? std::max(points.size(), listing.planned_phases / per_point)
                                    : points.size();
  std::string current_point;
  bool started = false;
  // A new point's header, before the first thing of that point.
  auto enter = [&](const std::string& point) {
    if (started && point == current_point) return;
    started = true;
    current_point = point;
    if (point.empty()) return;
    const size_t at =
        static_cast<size_t>(std::find(points.begin(), points.end(), point) - points.begin());
    std::fprintf(out, "Sweep point %zu/%zu: %s\n\n", at + 1, planned_points, point.c_str());
  };
  // The hooks and skipped points that came before phase `p`, as `run` printed them.
  size_t next_hook = 0, next_skip = 0;
  auto events_before = [&](size_t p) {
    bool in_group = false, last_ok = true;
    while (next_hook < record.hooks.size() && record.hooks[next_hook].before_phase <= p) {
      const HookOutcome& hook = record.hooks[next_hook++];
      if (in_group && hook.what != record.hooks[next_hook - 2].what) {
        if (last_ok) std::fputs("\n", out);
      }
      enter(hook.point);
      std::fputs(FormatHookLine(hook).c_str(), out);
      in_group = true;
      last_ok = hook.ok();
      const bool skipped_here = next_skip < record.skipped_points.size() &&
                                record.skipped_points[next_skip].before_phase <= p &&
                                record.skipped_points[next_skip].point == hook.point &&
                                !hook.ok() && hook.what == "setup";
      if (skipped_here) {
        std::fputs(FormatSkippedPoint(record.skipped_points[next_skip++]).c_str(), out);
        in_group = false;
      }
    }
    if (in_group && last_ok) std::fputs("\n", out);
  };
  for (size_t p = 0; p < phases.size(); ++p) {
    events_before(p);
    const PhaseOutcome& phase = phases[p];
    enter(DescribeSweepPoint(phase.plan.sweep_point));
    std::fputs(FormatPhaseTable(phase, Summarize(phase), p, count, repeat, view).c_str(), out);
    std::fputs("\n", out);
  }
  events_before(SIZE_MAX);
  if (const std::string summary = SweepSummaryTable(run->record, repeat); !summary.empty()) {
    std::fprintf(out, "%s\n", summary.c_str());
  }
  if (const RunStatus status = StatusOf(record); status.status != "complete") {
    std::fprintf(out, "%s\n", FormatRunStatus(status).c_str());
  }
  std::fputs(baseline.c_str(), out);
  return kExitOk;
}

int ResultsCompare(const ResultsOptions& options, const CompareOptions& compare,
                   const std::vector<std::string>& runs, std::FILE* out, std::FILE* err) {
  const bool gate = !compare.fail_if_slower.empty();
  GateOptions gate_options;
  if (gate) {
    auto threshold = ParseThreshold(compare.fail_if_slower);
    if (!threshold.ok()) return Fail(threshold.status(), err);
    gate_options.threshold = *threshold;
    auto metrics = GateMetrics(compare.metrics);
    if (!metrics.ok()) return Fail(metrics.status(), err);
    gate_options.metrics = std::move(*metrics);
  }
  if (compare.baseline.empty() ? runs.size() != 2 : runs.size() > 1) {
    return Fail(absl::InvalidArgumentError(
                    compare.baseline.empty()
                        ? "compare: give two runs (RUN_A RUN_B), or --baseline RUN and at most "
                          "one run to judge (default: latest)"
                        : "compare --baseline: give at most one run to judge (default: latest)"),
                err);
  }
  auto store = OpenStore(options, err);
  if (!store.ok()) return Fail(store.status(), err);
  const std::string candidate_ref = compare.baseline.empty() ? runs[1]
                                    : runs.empty()           ? "latest"
                                                             : runs[0];
  auto candidate_id = ResolveRun(**store, candidate_ref);
  if (!candidate_id.ok()) return Fail(candidate_id.status(), err);
  const std::string baseline_ref = compare.baseline.empty() ? runs[0] : compare.baseline;
  auto baseline_id = baseline_ref == "latest-same-plan" ? LatestSamePlanRun(**store, *candidate_id)
                                                        : ResolveRun(**store, baseline_ref);
  if (!baseline_id.ok()) return Fail(baseline_id.status(), err);
  if (gate && *baseline_id == *candidate_id) {
    return Fail(absl::InvalidArgumentError(common::StrCat(
                    "compare: the baseline and the run to judge are both ", *baseline_id)),
                err);
  }
  auto a = LoadRun(**store, *baseline_id, SeriesKept::kNone);
  if (!a.ok()) return Fail(a.status(), err);
  auto b = LoadRun(**store, *candidate_id, SeriesKept::kNone);
  if (!b.ok()) return Fail(b.status(), err);
  TableView view;
  view.all_hosts = compare.all_hosts;
  std::fputs(
      FormatComparison(a->record, b->record, CompareRuns(a->record, b->record), view).c_str(), out);
  if (!gate) return kExitOk;

  GateResult result =
      EvaluateGate(CompareRuns(a->record, b->record, /*aggregates=*/false), gate_options);
  AddValidityChecks(b->record, &result);
  const size_t hosts = std::max(a->record.agents.size(), b->record.agents.size());
  std::fputs(
      FormatGate(result, gate_options, Collapses(view, hosts) ? kFailedChecksShown : SIZE_MAX)
          .c_str(),
      out);
  if (!compare.junit.empty()) {
    const Status written = common::WriteFileAtomically(
        compare.junit, GateJUnit(result, gate_options, *baseline_id, *candidate_id,
                                 b->listing.started_unix_nanos));
    if (!written.ok()) return Fail(common::Annotate(written, "--junit"), err);
  }
  if (!compare.markdown.empty()) {
    const Status written = common::WriteFileAtomically(
        compare.markdown, GateMarkdown(result, gate_options, *baseline_id, *candidate_id));
    if (!written.ok()) return Fail(common::Annotate(written, "--markdown"), err);
  }
  return result.failures == 0 ? kExitOk : kExitRegression;
}

}  // namespace stormark::controller
