#include "controller/report/html/report_html.h"

#include <algorithm>
#include <optional>
#include <set>

#include "common/strings.h"
#include "common/units.h"
#include "common/version.h"
#include "controller/report/html/environment_section.h"
#include "controller/report/html/group_charts.h"
#include "controller/report/html/markup.h"
#include "controller/report/html/rank_shading.h"
#include "controller/report/html/report_charts.h"
#include "controller/report/repetitions.h"
#include "controller/report/report_table.h"
#include "controller/report/run_status.h"
#include "controller/report/summary.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

constexpr char kStyle[] = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330;
       margin: 0 auto; padding: 16px 24px 48px; max-width: 1360px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid #d0d5dd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; }
p.lead, p.hint { color: #4a5365; margin: 4px 0 10px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { border: 1px solid #d0d5dd; padding: 3px 8px; text-align: left; vertical-align: top; }
thead th { background: #eef1f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.num span.range { display: block; font-size: 11px; color: #4a5365; }
.wide { overflow-x: auto; }
tr.aggregate td { font-style: italic; background: #f6f7f9; }
table.facts th { background: #f6f7f9; font-weight: 600; }
table.environment tr.differs th, table.environment tr.differs td { background: #fff3bf; }
table.environment tr.differs th::before { content: "\2260  "; color: #b35c00; }
td.missing { color: #98a1b2; }
ul.notes { margin: 4px 0 12px; padding-left: 20px; }
ul.notes li.error { color: #a61b1b; }
.status-failed, .status-partial, .status-interrupted, .status-incomplete, .status-invalid { color: #a61b1b; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 8px 16px; }
figure { margin: 0; }
svg.chart { background: #fff; max-width: 100%; height: auto; }
svg.chart text { font: 11px system-ui, sans-serif; fill: #1d2330; }
svg.chart text.title { font-size: 13px; font-weight: 600; }
svg.chart text.axis-title { fill: #4a5365; }
svg.chart .grid { stroke: #e4e7ec; }
svg.chart .axis, svg.chart .tickmark { stroke: #667085; }
svg.chart path.line { fill: none; stroke-width: 2; }
svg.chart path.whisker { fill: none; stroke-width: 1.2; }
pre.invalid { border-left: 3px solid #a61b1b; padding-left: 8px; }
footer { margin-top: 40px; color: #667085; font-size: 12px; }
)css";

std::string E(std::string_view text) { return EscapeMarkup(text); }

std::string FactsTable(const StoredRun& run, bool collapsed) {
  const RunListing& l = run.listing;
  std::vector<std::pair<std::string, std::string>> facts = {
      {"run", l.run_id},
      {"label", l.label},
      {"started (UTC)", common::FormatIsoTime(l.started_unix_nanos)},
  };
  if (l.finished_unix_nanos > 0) {
    facts.emplace_back("finished (UTC)", common::FormatIsoTime(l.finished_unix_nanos));
  }
  facts.emplace_back("phases recorded",
                     fmt::format("{} of {}", l.recorded_phases, l.planned_phases));
  facts.emplace_back("mode", l.mode == RunMode::kSequential ? "sequential: one host at a time"
                                                            : "concurrent: all hosts at once");
  std::string hosts;
  if (collapsed) {
    hosts = fmt::format("{}: {}", l.hosts.size(), NameList(l.hosts, 5));
  } else {
    for (const std::string& h : l.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
  }
  facts.emplace_back("hosts", hosts);
  facts.emplace_back("recorded by", "stormark " + l.stormark_version);
  std::string out = "<table class=\"facts\">\n";
  out += fmt::format("<tr><th>status</th><td class=\"status-{0}\">{0}", E(l.status));
  // Why it is not complete, in the words of every other view (report/run_status.h).
  if (const RunStatus status = StatusOf(run.record); !status.reasons.empty()) {
    out += "<ul class=\"reasons\">";
    for (const std::string& reason : status.reasons) out += "<li>" + E(reason) + "</li>";
    out += "</ul>";
  }
  out += "</td></tr>\n";
  for (const auto& [key, value] : facts) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", E(key), E(value));
  }
  return out + "</table>\n";
}

// The median, with the range [min-max] under it in small type (FormatSpread's figures).
std::string SpreadCell(const Metric& metric, const Spread& spread, bool qualified) {
  if (spread.count == 0) return "-";
  std::string cell = E(metric.format(spread.median)) + (qualified ? " *" : "");
  if (spread.count > 1) {
    cell += fmt::format("<span class=\"range\">[{}-{}]</span>", E(metric.format(spread.min)),
                        E(metric.format(spread.max)));
  }
  return cell;
}

// Whether the host rows with the highest and the lowest median of `metric` have ranges that
// overlap, both measured over several repetitions (one repetition gives no range).
bool BestAndWorstOverlap(const std::vector<const Repetitions*>& rows, const Metric& metric) {
  std::optional<Spread> high, low;
  for (const Repetitions* r : rows) {
    if (r->aggregate) continue;  // The aggregate is not ranked.
    const Spread s = r->Of(metric);
    if (s.count == 0) continue;
    if (!high || s.median > high->median) high = s;
    if (!low || s.median < low->median) low = s;
  }
  if (!high || !low || high->count < 2 || low->count < 2) return false;
  return high->min <= low->max;
}

// The phase's figures: a row per sweep point, host and target (and the all-hosts row), a
// column per metric; host cells shaded by rank within their column.
std::string PhaseTable(const std::vector<const Repetitions*>& rows, const WorkloadKind* kind) {
  const bool swept = std::any_of(rows.begin(), rows.end(),
                                 [](const Repetitions* r) { return !r->key.sweep.empty(); });
  std::vector<const Metric*> metrics;
  for (const Metric& metric : Metrics()) {
    // A workload timed in seconds (a command) is its wall time and CPU, never IOPS.
    const bool timed = kind != nullptr && kind->seconds != nullptr;
    if (timed && metric.name != "elapsed" && metric.name != "CPU%") continue;
    if (std::any_of(rows.begin(), rows.end(),
                    [&](const Repetitions* r) { return r->Of(metric).count > 0; })) {
      metrics.push_back(&metric);
    }
  }
  // shades[metric][row]; aggregate rows are not ranked against hosts.
  std::vector<std::vector<std::string>> shades;
  for (const Metric* metric : metrics) {
    std::vector<std::optional<double>> values;
    for (const Repetitions* r : rows) {
      const Spread s = r->Of(*metric);
      values.push_back(s.count > 0 && !r->aggregate ? std::optional(s.median) : std::nullopt);
    }
    // bon_csv2html leaves CPU unshaded: more CPU is neither better nor worse by itself. Nor
    // is a column shaded whose best and worst ranges overlap: their difference is noise.
    shades.push_back(metric->name == "CPU%" || BestAndWorstOverlap(rows, *metric)
                         ? std::vector<std::string>(rows.size())
                         : RankShades(values, metric->higher_is_better));
  }
  std::string out = "<div class=\"wide\"><table class=\"results\">\n<thead><tr>";
  if (swept) out += "<th>sweep point</th>";
  out += "<th>host</th><th>target</th><th>runs</th>";
  for (const Metric* metric : metrics) out += "<th>" + E(metric->name) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    const Repetitions& row = *rows[r];
    out += row.aggregate ? "<tr class=\"aggregate\">" : "<tr>";
    if (swept) out += "<td>" + E(row.key.sweep) + "</td>";
    const int failed = row.failed - static_cast<int>(row.partial.size());
    std::string not_ok;
    if (failed > 0) not_ok = fmt::format("{} failed", failed);
    if (!row.partial.empty()) {
      not_ok += fmt::format("{}{} aborted ~", not_ok.empty() ? "" : ", ", row.partial.size());
    }
    out +=
        fmt::format("<td>{}</td><td>{}</td><td class=\"num\">{}{}</td>",
                    row.invalid == 0 ? E(row.key.host)
                                     : E(row.key.host) +
                                           " <span class=\"status-invalid\">"
                                           "INVALID</span>",
                    E(row.key.target), row.rows.size(), not_ok.empty() ? "" : " (" + not_ok + ")");
    for (size_t m = 0; m < metrics.size(); ++m) {
      const std::string& shade = shades[m][r];
      // A row with nothing but partial runs shows their figures, marked as partial.
      const bool partial_only = row.rows.empty() && !row.partial.empty();
      const std::string cell =
          partial_only ? SpreadCell(*metrics[m], row.PartialOf(*metrics[m]), false) + " ~"
                       : SpreadCell(*metrics[m], row.Of(*metrics[m]), row.qualified);
      out += fmt::format("<td class=\"num\"{}>{}</td>",
                         shade.empty() ? "" : fmt::format(" style=\"background:{}\"", shade), cell);
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

// Every note and error of the phase's runs, once each, naming host, point and repetition.
std::string PhaseNotes(const RunRecord& run, const std::string& phase) {
  std::set<std::string> seen;
  std::string out;
  for (const PhaseOutcome& p : run.phases) {
    if (p.plan.name != phase) continue;
    const std::string sweep = DescribeSweepPoint(p.plan.sweep_point);
    const PhaseSummary summary = Summarize(p);
    if (summary.validity.judged()) {
      // Every run's verdict, valid or not: whether its all-hosts figures are the fleet's.
      std::string text(common::Trim(ValidityLines(summary.validity)));
      for (size_t nl; (nl = text.find("\n  ")) != std::string::npos;) text.replace(nl, 3, "; ");
      out += fmt::format("<li{}>all hosts{} run {}: {}</li>\n",
                         summary.validity.invalid() ? " class=\"error\"" : "",
                         sweep.empty() ? std::string() : common::StrCat(" ", E(sweep)),
                         p.plan.repetition + 1, E(text));
    }
    for (const HostOutcome& h : p.hosts) {
      std::vector<std::pair<std::string, bool>> lines;
      if (!h.error.empty()) lines.emplace_back(h.error, true);
      if (h.result) {
        for (const auto& w : h.result->warnings()) lines.emplace_back(w, false);
      }
      for (const RowSummary& row : summary.rows) {
        if (row.host == h.host && IsPartial(row))
          lines.emplace_back("~ " + PartialNote(row), false);
      }
      for (const auto& [text, error] : lines) {
        const std::string where = fmt::format("{}{}{}", h.host, sweep.empty() ? "" : " " + sweep,
                                              fmt::format(" run {}", p.plan.repetition + 1));
        if (!seen.insert(h.host + '\n' + text).second) continue;
        out +=
            fmt::format("<li{}>{}: {}</li>\n", error ? " class=\"error\"" : "", E(where), E(text));
      }
    }
  }
  return out.empty() ? "" : "<ul class=\"notes\">\n" + out + "</ul>\n";
}

std::string ResultsSection(const RunRecord& run) {
  const std::vector<Repetitions> groups = GroupRepetitions(run, /*aggregates=*/true);
  std::vector<std::string> phases;
  for (const Repetitions& g : groups) {
    if (std::find(phases.begin(), phases.end(), g.key.phase) == phases.end()) {
      phases.push_back(g.key.phase);
    }
  }
  std::string out = "<section id=\"results\">\n<h2>Results</h2>\n";
  out +=
      "<p class=\"lead\">Each figure is the median over the repetitions that succeeded, with "
      "their range [min-max]. Cells are shaded as bon_csv2html shades bonnie++'s table: "
      "green is the best host of the column, red the worst. A <b>*</b> marks figures from "
      "a repetition with notes (listed under the table): read them before the number. A "
      "<b>~</b> marks the figures of runs aborted after they had done work: those until the "
      "abort.</p>\n";
  if (phases.empty()) out += "<p>No phase was recorded.</p>\n";
  for (const std::string& phase : phases) {
    std::vector<const Repetitions*> rows;
    for (const Repetitions& g : groups) {
      if (g.key.phase == phase) rows.push_back(&g);
    }
    const PhaseOutcome* first = nullptr;
    for (const PhaseOutcome& p : run.phases) {
      if (p.plan.name == phase && first == nullptr) first = &p;
    }
    const WorkloadKind* kind = first == nullptr ? nullptr : KindOf(first->plan.spec);
    // One description holds for every row only outside a sweep: a swept phase names its
    // workload and the parameters its rows differ in (each row's point gives their values).
    std::string described = rows.front()->description;
    for (const Repetitions* row : rows) {
      if (row->description == described || first == nullptr || kind == nullptr) continue;
      std::string swept;
      for (const auto& [key, value] : first->plan.sweep_point) {
        swept += (swept.empty() ? "" : ", ") + key;
      }
      described =
          fmt::format("{}, swept over {} (each row's point gives their values)", kind->name, swept);
      break;
    }
    out += fmt::format("<h3>{}: {}</h3>\n", E(phase), E(described));
    if (kind != nullptr && kind->blended_totals && kind->table != nullptr) {
      // Its own table per run, as the live output prints it (bonnie++'s layout): a figure
      // over all of its tests would blend block I/O, seeks and file creates.
      for (const PhaseOutcome& p : run.phases) {
        if (p.plan.name != phase) continue;
        const std::string sweep = DescribeSweepPoint(p.plan.sweep_point);
        out += fmt::format("<p class=\"hint\">{}run {}</p>\n<pre>{}</pre>\n",
                           sweep.empty() ? "" : E(sweep) + ", ", p.plan.repetition + 1,
                           E(kind->table(p, Summarize(p))));
      }
    } else {
      out += PhaseTable(rows, kind);
      // A run group of unlike jobs (a fio job file's jobs without stonewall): each job's own
      // figures, in the live output's table, under the totals above.
      for (const PhaseOutcome& p : run.phases) {
        if (p.plan.name != phase || kind == nullptr || kind->table == nullptr) continue;
        const bool jobs = std::any_of(p.hosts.begin(), p.hosts.end(), [](const HostOutcome& h) {
          return h.result && h.result->jobs_size() > 0;
        });
        if (!jobs) continue;
        const std::string sweep = DescribeSweepPoint(p.plan.sweep_point);
        out += fmt::format(
            "<p class=\"hint\">{}run {}, each job of the run group</p>\n<pre>{}</pre>\n",
            sweep.empty() ? "" : E(sweep) + ", ", p.plan.repetition + 1,
            E(kind->table(p, Summarize(p))));
      }
    }
    out += PhaseNotes(run, phase);
  }
  return out + "</section>\n";
}

// A fleet's results: per phase, each run's table as `stormark results show` prints it (groups
// of hosts, the hosts that stand out, the notes grouped by text, the validity verdict).
std::string GroupedResultsSection(const RunRecord& run, const TableView& view) {
  int repeat = 1;
  for (const PhaseOutcome& p : run.phases) repeat = std::max(repeat, p.plan.repetition + 1);
  std::string out = "<section id=\"results\">\n<h2>Results</h2>\n";
  out += fmt::format(
      "<p class=\"lead\">{} hosts: each phase run's table shows a row per group of hosts "
      "(by {}) with the spread of the hosts' figures (min, p50, p99, max) and the group's "
      "aggregate, then the hosts that stand out by name, as <code>stormark results show</code> "
      "prints it. <code>stormark report --all-hosts</code> writes a row per host.</p>\n",
      run.agents.size(), E(view.group_by));
  if (run.phases.empty()) out += "<p>No phase was recorded.</p>\n";
  for (size_t i = 0; i < run.phases.size(); ++i) {
    const PhaseOutcome& p = run.phases[i];
    const std::string table = FormatPhaseTable(p, Summarize(p), i, run.phases.size(), repeat, view);
    const bool invalid = table.find("INVALID") != std::string::npos;
    out += fmt::format("<pre{}>{}</pre>\n", invalid ? " class=\"invalid\"" : "", E(table));
  }
  return out + "</section>\n";
}

std::string ChartSection(std::string_view id, std::string_view title, std::string_view hint,
                         const std::string& figures) {
  if (figures.empty()) return "";
  return fmt::format(
      "<section id=\"{}\">\n<h2>{}</h2>\n<p class=\"hint\">{}</p>\n<div class=\"charts\">\n{}"
      "</div>\n</section>\n",
      id, title, hint, figures);
}

std::string EnvironmentSection(const RunRecord& run, bool collapsed) {
  const std::string machines = collapsed ? GroupedEnvironmentTable(MachineFacts(run), "hosts")
                                         : EnvironmentTable(MachineFacts(run));
  const std::string targets = collapsed ? GroupedEnvironmentTable(TargetFacts(run), "targets")
                                        : EnvironmentTable(TargetFacts(run));
  if (machines.empty() && targets.empty()) return "";
  return "<section id=\"environment\">\n<h2>Environment</h2>\n<p class=\"hint\">As each agent "
         "reported it when the run started. Highlighted rows differ between hosts or targets: "
         "a difference in the figures may come from them.</p>\n<h3>Machines</h3>\n" +
         machines + "<h3>Targets</h3>\n" + targets + "</section>\n";
}

}  // namespace

std::string HtmlReport(const StoredRun& run, const TableView& view) {
  const RunRecord& record = run.record;
  size_t hosts = std::max(record.agents.size(), run.listing.hosts.size());
  for (const PhaseOutcome& p : record.phases) hosts = std::max(hosts, p.hosts.size());
  const bool collapsed = Collapses(view, hosts);
  const std::string title = fmt::format("stormark report {}{}", run.listing.run_id,
                                        run.listing.label.empty() ? "" : ": " + run.listing.label);
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"stormark " + E(std::string(common::kSoftwareVersion)) +
         "\">\n";
  out += "<title>" + E(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>" + E(title) + "</h1>\n";
  out += FactsTable(run, collapsed);
  if (collapsed) {
    const FleetGroups groups = GroupFleet(record, view);
    out += GroupedResultsSection(record, view);
    out += ChartSection("throughput", "Throughput and IOPS",
                        "Per group of hosts: the bar is the median host (each host's figure "
                        "being its median over repetitions), the whisker runs from the lowest "
                        "host to the highest. Hover a bar for its figures.",
                        GroupThroughputCharts(record, groups));
    out += ChartSection("sweeps", "Sweeps",
                        "The phase's figure against each swept parameter, one line per group: "
                        "the median host, the whisker from the lowest host to the highest.",
                        GroupSweepCharts(record, groups));
    out += ChartSection("latency", "Latency",
                        "Per group, from its hosts' latency histograms merged over hosts and "
                        "repetitions (percentiles are never averaged); the all-hosts line; and "
                        "the hosts that stand out for their p99 latency, on their own.",
                        GroupLatencyCharts(record, groups));
    out += ChartSection("series", "Time series",
                        "Per phase run, on the controller's clock: what each group's hosts did "
                        "together in each interval, then a host's rate (the median host, the "
                        "range across the group's hosts shaded) with the hosts that stand out "
                        "drawn on their own.",
                        GroupTimeSeriesCharts(record, groups));
  } else {
    out += ResultsSection(record);
    out += ChartSection("throughput", "Throughput and IOPS",
                        "Per host: the bar is the median over repetitions, the whisker their "
                        "range. Hover a bar for its figures.",
                        ThroughputCharts(record));
    out += ChartSection("sweeps", "Sweeps",
                        "The phase's figure against each swept parameter, one line per host: "
                        "the curve the reference posts plot by hand. Whiskers: range over "
                        "repetitions.",
                        SweepCharts(record));
    out += ChartSection("latency", "Latency",
                        "From each host's latency histograms merged over repetitions "
                        "(percentiles are never averaged). Both axes of interest are "
                        "logarithmic.",
                        LatencyCharts(record));
    out += ChartSection("series", "Time series",
                        "Each host's rate in every interval it reported, per phase run.",
                        TimeSeriesCharts(record));
  }
  out += EnvironmentSection(record, collapsed);
  out += "<footer>Written by stormark " + E(std::string(common::kSoftwareVersion)) +
         " from the results history. Self-contained: no script, no network.</footer>\n";
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace stormark::controller
