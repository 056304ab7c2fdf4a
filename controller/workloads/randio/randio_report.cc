#include "controller/workloads/randio/randio_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "common/histogram.h"
#include "common/strings.h"
#include "common/units.h"
#include "controller/fleet/fleet.h"
#include "controller/report/summary.h"
#include "controller/report/text_table.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using Align = TextTable::Align;
using stormark::v1::PhaseResult;

constexpr const char* kOps[] = {"read", "write", "flush"};
constexpr double kPercentiles[] = {50, 90, 99, 99.9, 99.99};

// One operation type's figures on one host, or merged over hosts.
struct OpFigures {
  uint64_t ops = 0;
  uint64_t bytes = 0;
  common::LatencyHistogram latency;
};

std::string Seconds(double s) { return fmt::format("{:.2f} s", s); }

std::string Latency(const common::LatencyHistogram& h, double p) {
  return common::FormatDurationNanos(static_cast<double>(h.Percentile(p)));
}

// The row's place: host, the transport when the table has a via column, target.
std::vector<std::string> Place(bool via, const std::string& host, const std::string& transport,
                               const std::string& target) {
  if (!via) return {host, target};
  // Continuation lines and the aggregate row (no target) leave it blank.
  return {host, host.empty() || target.empty() ? "" : transport.empty() ? "-" : transport, target};
}

std::vector<std::string> Cells(std::vector<std::string> place,
                               std::initializer_list<std::string> rest) {
  place.insert(place.end(), rest.begin(), rest.end());
  return place;
}

void AddRow(TextTable& table, std::vector<std::string> place, const char* op, const OpFigures& f,
            double seconds, const std::string& cpu, const std::string& status) {
  std::vector<std::string> cells = std::move(place);
  cells.push_back(op);
  const double rate = seconds > 0 ? 1.0 / seconds : 0;
  cells.push_back(common::FormatIops(static_cast<double>(f.ops) * rate));
  cells.push_back(std::string_view(op).ends_with("flush")
                      ? "-"
                      : fmt::format("{:.1f}", static_cast<double>(f.bytes) * rate / (1 << 20)));
  for (double p : kPercentiles) cells.push_back(Latency(f.latency, p));
  cells.push_back(common::FormatDurationNanos(static_cast<double>(f.latency.max())));
  cells.push_back(cpu);
  cells.push_back(status);
  table.AddRow(std::move(cells));
}

// The per-operation figures of a host's result (or of one job of a run group); empty when a
// histogram is corrupt.
std::map<std::string, OpFigures> Figures(
    const google::protobuf::RepeatedPtrField<stormark::v1::Measurement>& measurements) {
  std::map<std::string, OpFigures> out;
  for (const auto& m : measurements) {
    auto latency = common::LatencyHistogram::FromProto(m.latency());
    if (!latency.ok()) return {};
    OpFigures& f = out[m.name()];
    f.ops += m.ops();
    f.bytes += m.bytes();
    f.latency.Merge(*latency);
  }
  return out;
}

// The verification outcome of one host: a summary line and the first mismatches.
std::string VerifyLines(const std::string& host, const stormark::v1::VerifyReport& v) {
  std::string out = fmt::format("  verify {}: {} units of {} checked, {} mismatch{}\n", host,
                                v.units_checked(), common::FormatBytes(v.unit_bytes()),
                                v.mismatches(), v.mismatches() == 1 ? "" : "es");
  for (const auto& m : v.first_mismatches()) {
    out += fmt::format("    offset {} ({}): {}, {}: expected {}, found {}\n", m.offset(),
                       m.during(), m.kind(), m.field(), m.expected(), m.actual());
  }
  if (static_cast<uint64_t>(v.first_mismatches_size()) < v.mismatches()) {
    out += fmt::format("    ... and {} more\n",
                       v.mismatches() - static_cast<uint64_t>(v.first_mismatches_size()));
  }
  return out;
}

}  // namespace

std::string RandioTable(const PhaseOutcome& outcome, const PhaseSummary& summary) {
  const bool via = std::any_of(summary.rows.begin(), summary.rows.end(),
                               [](const RowSummary& row) { return !row.transport.empty(); });
  TextTable table;
  table.AddColumn("host", Align::kLeft);
  if (via) table.AddColumn("via", Align::kLeft);
  table.AddColumn("target", Align::kLeft);
  table.AddColumn("op", Align::kLeft);
  table.AddColumn("IOPS", Align::kRight);
  table.AddColumn("MiB/s", Align::kRight);
  for (const char* p : {"p50", "p90", "p99", "p99.9", "p99.99"}) table.AddColumn(p, Align::kRight);
  table.AddColumn("max", Align::kRight);
  table.AddColumn("CPU%", Align::kRight);
  table.AddColumn("status", Align::kLeft);

  std::map<std::string, OpFigures> all;
  // Each op's rates summed over the hosts: a sequential phase's last row is their mean, since
  // its hosts never ran together (a sum would read as an aggregate no host saw).
  struct RateSum {
    double ops = 0;
    double bytes = 0;
  };
  std::map<std::string, RateSum> rates;
  std::string verify;
  TextTable stones;
  stones.AddColumn("stonewall", Align::kLeft);
  stones.AddColumn("first done", Align::kRight);
  stones.AddColumn("IOPS then", Align::kRight);
  stones.AddColumn("last done", Align::kRight);
  bool show_stones = summary.rows.size() > 1;
  int64_t phase_start = INT64_MAX, first_done = INT64_MAX, last_done = INT64_MIN;

  for (size_t i = 0; i < outcome.hosts.size() && i < summary.rows.size(); ++i) {
    const HostOutcome& host = outcome.hosts[i];
    const RowSummary& row = summary.rows[i];
    // A job of a run group, named as the plan names it (an agent's text does not reach the
    // terminal).
    const stormark::v1::RandioSpec& planned = outcome.plan.spec.randio();
    auto job_name = [&](int j) {
      return j == 0                      ? planned.name()
             : j <= planned.group_size() ? planned.group(j - 1).name()
                                         : common::StrCat("job ", j + 1);
    };
    // Also for a failed host: a verification failure is what its mismatches explain. A run
    // group's verifying jobs each have their own lines.
    if (host.result && host.result->has_verify()) {
      bool per_job = false;
      for (int j = 0; j < host.result->jobs_size(); ++j) {
        if (!host.result->jobs(j).has_verify()) continue;
        per_job = true;
        verify += VerifyLines(common::StrCat(row.host, " job '", job_name(j), "'"),
                              host.result->jobs(j).verify());
      }
      if (!per_job) verify += VerifyLines(row.host, host.result->verify());
    }
    if (!host.succeeded() || row.status != "succeeded") {
      const std::string status = row.status == "aborted"  ? "ABORTED"
                                 : row.status == "failed" ? "FAILED"
                                                          : "ERROR";
      table.AddRow(Cells(Place(via, row.host, row.transport, row.target),
                         {"-", "-", "-", "-", "-", "-", "-", "-", "-", "-", status}));
    } else {
      const PhaseResult& r = *host.result;
      const std::map<std::string, OpFigures> figures = Figures(r.measurements());
      const std::string mark = row.warnings.empty() ? "" : " *";
      bool first_row = true;
      for (const char* op : kOps) {
        auto it = figures.find(op);
        if (it == figures.end()) continue;
        AddRow(table,
               Place(via, first_row ? row.host : "", row.transport, first_row ? row.target : ""),
               op, it->second, row.elapsed_seconds,
               first_row ? fmt::format("{:.1f}", row.cpu_percent) : "",
               first_row ? "ok" + mark : "");
        first_row = false;
        OpFigures& merged = all[op];
        merged.ops += it->second.ops;
        merged.bytes += it->second.bytes;
        merged.latency.Merge(it->second.latency);
        if (row.elapsed_seconds > 0) {
          RateSum& rate = rates[op];
          rate.ops += static_cast<double>(it->second.ops) / row.elapsed_seconds;
          rate.bytes += static_cast<double>(it->second.bytes) / row.elapsed_seconds;
        }
      }
      if (first_row) {
        table.AddRow(Cells(Place(via, row.host, row.transport, row.target),
                           {"-", "0", "0.0", "-", "-", "-", "-", "-", "-",
                            fmt::format("{:.1f}", row.cpu_percent), "ok" + mark}));
      }
      // A run group of unlike jobs: each job's own figures under the host's totals.
      for (int j = 0; j < r.jobs_size(); ++j) {
        const auto& job = r.jobs(j);
        const std::string name = job_name(j);
        const std::map<std::string, OpFigures> own = Figures(job.measurements());
        for (const char* op : kOps) {
          auto it = own.find(op);
          if (it == own.end()) continue;
          const std::string label = common::StrCat("  ", name, ": ", op);
          AddRow(table, Place(via, "", "", ""), label.c_str(), it->second, row.elapsed_seconds, "",
                 "");
        }
      }
      // Stonewall: a single job finishes when the phase does.
      const bool jobs = r.last_done_nanos() > 0;
      show_stones = show_stones || jobs;
      const int64_t first = jobs ? r.first_done_nanos() : r.elapsed_nanos();
      const int64_t last = jobs ? r.last_done_nanos() : r.elapsed_nanos();
      const double ops_then =
          jobs ? static_cast<double>(r.first_done_ops()) : static_cast<double>(r.ops());
      stones.AddRow(
          {row.host, Seconds(static_cast<double>(first) / 1e9),
           common::FormatIops(first > 0 ? ops_then * 1e9 / static_cast<double>(first) : 0),
           Seconds(static_cast<double>(last) / 1e9)});
      const int64_t start = r.start_unix_nanos() - host.clock.offset_nanos;
      phase_start = std::min(phase_start, start);
      first_done = std::min(first_done, start + first);
      last_done = std::max(last_done, start + last);
    }
  }
  if (summary.all_hosts && summary.rows.size() > 1) {
    const RowSummary& agg = *summary.all_hosts;
    const std::string label = agg.invalid ? agg.host + " INVALID" : agg.host;
    bool first_row = true;
    for (const char* op : kOps) {
      auto it = all.find(op);
      if (it == all.end()) continue;
      if (outcome.mode == RunMode::kSequential && agg.hosts > 0) {
        // The mean of the hosts' rates, over the mean host's elapsed time.
        const RateSum& rate = rates[op];
        it->second.ops =
            static_cast<uint64_t>(std::llround(rate.ops / agg.hosts * agg.elapsed_seconds));
        it->second.bytes =
            static_cast<uint64_t>(std::llround(rate.bytes / agg.hosts * agg.elapsed_seconds));
      }
      AddRow(table, Place(via, first_row ? label : "", "", ""), op, it->second, agg.elapsed_seconds,
             first_row ? fmt::format("{:.1f}", agg.cpu_percent) : "",
             first_row ? fmt::format("{} host{}", agg.hosts, agg.hosts == 1 ? "" : "s") : "");
      first_row = false;
    }
    if (phase_start != INT64_MAX && outcome.mode == RunMode::kConcurrent) {
      stones.AddRow({label, Seconds(static_cast<double>(first_done - phase_start) / 1e9), "",
                     Seconds(static_cast<double>(last_done - phase_start) / 1e9)});
    }
  }
  std::string out = table.Render("  ");
  // (Appended piece by piece: GCC 12 warns falsely about "\n" + std::string here.)
  if (show_stones && phase_start != INT64_MAX) {
    out += '\n';
    out += stones.Render("  ");
  }
  if (!verify.empty()) {
    out += '\n';
    out += verify;
  }
  return out;
}

}  // namespace stormark::controller
