#include "controller/results/results_command.h"

#include <memory>

#include "common/strings.h"
#include "common/units.h"
#include "controller/environment.h"
#include "controller/report_baseline.h"
#include "controller/report_compare.h"
#include "controller/report_table.h"
#include "controller/results/results_query.h"
#include "controller/results/results_store.h"
#include "controller/summary.h"
#include "controller/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;

int Fail(const Status& status, std::FILE* err) {
  std::fprintf(err, "stormark: %s\n", std::string(status.message()).c_str());
  return kExitBadInput;
}

StatusOr<std::unique_ptr<ResultsStore>> OpenStore(const ResultsOptions& options) {
  const std::string path = options.db_path.empty() ? DefaultResultsPath() : options.db_path;
  auto store = ResultsStore::OpenExisting(path);
  if (!store.ok()) return common::Annotate(store.status(), "results database");
  return store;
}

StatusOr<StoredRun> LoadNamedRun(const ResultsStore& store, const std::string& ref) {
  ASSIGN_OR_RETURN(std::string run_id, ResolveRun(store, ref));
  return LoadRun(store, run_id);
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
  auto store = OpenStore(options);
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
  auto store = OpenStore(options);
  if (!store.ok()) return Fail(store.status(), err);
  auto run = LoadNamedRun(**store, ref);
  if (!run.ok()) return Fail(run.status(), err);
  std::string baseline;
  if (!options.baseline.empty()) {
    auto table = FormatBaselineTables(run->record, options.baseline);
    if (!table.ok()) return Fail(table.status(), err);
    baseline = std::move(*table);
  }
  const RunListing& listing = run->listing;
  std::fprintf(out, "run %s  %s  started %s  %s  (stormark %s)\n", listing.run_id.c_str(),
               listing.status.c_str(), common::FormatIsoTime(listing.started_unix_nanos).c_str(),
               listing.label.c_str(), listing.stormark_version.c_str());
  if (listing.status == kRunIncomplete) {
    std::fprintf(out,
                 "  incomplete: its controller stopped without ending the run; %zu of %zu "
                 "phases were recorded\n",
                 listing.recorded_phases, listing.planned_phases);
  }
  std::fputs(FormatAgentsTable(run->record.agents).c_str(), out);
  if (const std::string notes = FormatEnvironmentNotes(run->record.agents); !notes.empty()) {
    std::fprintf(out, "\n%s", notes.c_str());
  }
  std::fputs("\n", out);
  const size_t count = std::max(listing.planned_phases, run->record.phases.size());
  for (size_t p = 0; p < run->record.phases.size(); ++p) {
    const PhaseOutcome& phase = run->record.phases[p];
    std::fputs(FormatPhaseTable(phase, Summarize(phase), p, count).c_str(), out);
    std::fputs("\n", out);
  }
  std::fputs(baseline.c_str(), out);
  return kExitOk;
}

int ResultsCompare(const ResultsOptions& options, const std::string& ref_a,
                   const std::string& ref_b, std::FILE* out, std::FILE* err) {
  auto store = OpenStore(options);
  if (!store.ok()) return Fail(store.status(), err);
  auto a = LoadNamedRun(**store, ref_a);
  if (!a.ok()) return Fail(a.status(), err);
  auto b = LoadNamedRun(**store, ref_b);
  if (!b.ok()) return Fail(b.status(), err);
  const std::vector<ComparisonRow> rows = CompareRuns(a->record, b->record);
  std::fputs(FormatComparison(a->record, b->record, rows).c_str(), out);
  return kExitOk;
}

}  // namespace stormark::controller
