#include "controller/report/report_export.h"

#include "common/strings.h"
#include "common/units.h"
#include "controller/report/summary.h"
#include "controller/run/full_phase.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

// An RFC 4180 field: quoted when it holds a comma, quote or line break.
std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Number(double value) { return fmt::format("{:.10g}", value); }

// A Prometheus label value: backslash, double quote and newline escaped.
std::string LabelValue(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// One metric family: HELP, TYPE and its samples.
class Family {
 public:
  Family(std::string name, std::string type, std::string help)
      : name_(std::move(name)), type_(std::move(type)), help_(std::move(help)) {}
  void Add(const std::string& labels, double value, std::string_view suffix = "",
           const std::string& extra_label = "") {
    lines_ += fmt::format("{}{}{{{}{}}} {}\n", name_, suffix, labels,
                          extra_label.empty() ? "" : "," + extra_label, Number(value));
  }
  std::string Render() const {
    if (lines_.empty()) return "";
    return fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", name_, help_, name_, type_, lines_);
  }

 private:
  std::string name_, type_, help_, lines_;
};

}  // namespace

std::string RunCsv(const RunRecord& run) {
  std::string out =
      "run_id,started,phase_index,phase,repetition,sweep_point,host,target,status,metric,"
      "value,unit,marks\r\n";
  const std::string started = common::FormatIsoTime(run.started_unix_nanos);
  for (size_t p = 0; p < run.phases.size(); ++p) {
    const PhaseOutcome& phase = run.phases[p];
    const PhaseSummary summary = Summarize(phase);
    const std::string place = fmt::format("{},{},{},{},{},{}", CsvField(run.run_id), started, p,
                                          CsvField(phase.plan.name), phase.plan.repetition,
                                          CsvField(DescribeSweepPoint(phase.plan.sweep_point)));
    for (const RowSummary& row : summary.rows) {
      const std::string prefix =
          fmt::format("{},{},{},{},", place, CsvField(row.host), CsvField(row.target), row.status);
      // The marks of the phase table's figure: "*" it has notes, "~" it is partial.
      const bool partial = IsPartial(row);
      const std::string marks = common::StrCat(row.warnings.empty() ? "" : "*", partial ? "~" : "");
      for (const std::string& note : row.warnings) {
        out += prefix + "note," + CsvField(note) + ",," + marks + "\r\n";
      }
      if (partial) out += prefix + "note," + CsvField(PartialNote(row)) + ",," + marks + "\r\n";
      if (row.status != "succeeded") {
        out += prefix + "error," + CsvField(row.error) + ",," + marks + "\r\n";
        if (!partial) continue;
      }
      auto add = [&](std::string_view metric, double value, std::string_view unit) {
        out += fmt::format("{}{},{},{},{}\r\n", prefix, metric, Number(value), unit, marks);
      };
      add("bytes", static_cast<double>(row.bytes), "B");
      add("ops", static_cast<double>(row.ops), "ops");
      add("elapsed", row.elapsed_seconds, "s");
      add("throughput", row.bytes_per_second, "B/s");
      add("iops",
          row.elapsed_seconds > 0 ? static_cast<double>(row.ops) / row.elapsed_seconds : 0.0,
          "ops/s");
      add("cpu", row.cpu_percent, "%");
      if (row.latency.count() == 0) continue;
      for (const auto& [name, p] :
           {std::pair{"latency_p50", 50.0}, std::pair{"latency_p90", 90.0},
            std::pair{"latency_p99", 99.0}, std::pair{"latency_p99_9", 99.9}}) {
        add(name, static_cast<double>(row.latency.Percentile(p)), "ns");
      }
      add("latency_max", static_cast<double>(row.latency.max()), "ns");
    }
    // The phase's validity verdict (validity.h), on rows of its own: whether its hosts ran
    // together, and what they did while they all ran.
    const PhaseValidity& v = summary.validity;
    if (v.judged()) {
      const std::string prefix =
          fmt::format("{},all hosts,,{},", place, v.invalid() ? "invalid" : "valid");
      const std::string marks = v.invalid() ? "*" : "";
      if (v.invalid())
        out += prefix + "note," + CsvField("INVALID: " + v.why) + ",," + marks + "\r\n";
      out += fmt::format("{}start_spread_share,{},share,{}\r\n", prefix, Number(v.share()), marks);
      out += fmt::format("{}start_spread_limit,{},share,{}\r\n", prefix, Number(v.limit), marks);
      const double seconds = static_cast<double>(v.window_nanos) / 1e9;
      out += fmt::format("{}all_running_elapsed,{},s,{}\r\n", prefix, Number(seconds), marks);
      if (seconds > 0) {
        out += fmt::format("{}all_running_throughput,{},B/s,{}\r\n", prefix,
                           Number(static_cast<double>(v.window_bytes) / seconds), marks);
        out += fmt::format("{}all_running_iops,{},ops/s,{}\r\n", prefix,
                           Number(static_cast<double>(v.window_ops) / seconds), marks);
      }
    }
  }
  return out;
}

std::string RunBonnieCsv(const RunRecord& run, common::Status* read_back) {
  std::string text;
  for (size_t p = 0; p < run.phases.size(); ++p) {
    const WorkloadKind* kind = KindOf(run.phases[p].plan.spec);
    if (kind == nullptr || kind->csv_line == nullptr) continue;
    const FullPhase full(run, p);
    full.KeepFirstError(read_back);
    if (!full.status().ok()) continue;  // A line from a summary would be a line of zeros.
    for (const HostOutcome& host : full->hosts) {
      if (host.succeeded()) text += kind->csv_line(host.host, *host.result) + "\n";
    }
  }
  return text;
}

std::string RunPrometheus(const RunRecord& run, const std::string& label) {
  Family start("stormark_run_start_time_seconds", "gauge",
               "When the run started, in seconds since the Unix epoch.");
  Family succeeded("stormark_phase_succeeded", "gauge",
                   "1 when the host finished the phase run, 0 when it failed or gave no result.");
  Family bytes("stormark_bytes", "gauge", "Bytes moved in the timed region.");
  Family ops("stormark_operations", "gauge", "Operations done in the timed region.");
  Family elapsed("stormark_elapsed_seconds", "gauge", "Length of the timed region.");
  Family throughput("stormark_throughput_bytes_per_second", "gauge",
                    "Bytes moved per second of the timed region.");
  Family iops("stormark_operations_per_second", "gauge",
              "Operations per second of the timed region.");
  Family cpu("stormark_cpu_percent", "gauge",
             "The agent's user+system CPU time over the timed region; 100 is one core.");
  Family latency(
      "stormark_latency_seconds", "summary",
      "Latency of one operation, from the host's histogram (quantile 1 is the maximum).");

  // The run id only labels the run's start: on every figure it would make each run a new set
  // of time series in Prometheus, where the label (the plan) and the place are what stay.
  const std::string run_labels = fmt::format("label=\"{}\"", LabelValue(label));
  start.Add(fmt::format("run_id=\"{}\",{}", LabelValue(run.run_id), run_labels),
            static_cast<double>(run.started_unix_nanos) / 1e9);
  for (const PhaseOutcome& phase : run.phases) {
    const PhaseSummary summary = Summarize(phase);
    for (const RowSummary& row : summary.rows) {
      const std::string labels = fmt::format(
          "{},phase=\"{}\",sweep=\"{}\",repetition=\"{}\",host=\"{}\",target=\"{}\"", run_labels,
          LabelValue(phase.plan.name), LabelValue(DescribeSweepPoint(phase.plan.sweep_point)),
          phase.plan.repetition + 1, LabelValue(row.host), LabelValue(row.target));
      const bool ok = row.status == "succeeded";
      succeeded.Add(labels, ok ? 1 : 0);
      if (!ok) continue;
      bytes.Add(labels, static_cast<double>(row.bytes));
      ops.Add(labels, static_cast<double>(row.ops));
      elapsed.Add(labels, row.elapsed_seconds);
      throughput.Add(labels, row.bytes_per_second);
      iops.Add(labels,
               row.elapsed_seconds > 0 ? static_cast<double>(row.ops) / row.elapsed_seconds : 0.0);
      cpu.Add(labels, row.cpu_percent);
      if (row.latency.count() == 0) continue;
      for (const auto& [quantile, p] : {std::pair{"0.5", 50.0}, std::pair{"0.9", 90.0},
                                        std::pair{"0.99", 99.0}, std::pair{"0.999", 99.9}}) {
        latency.Add(labels, static_cast<double>(row.latency.Percentile(p)) / 1e9, "",
                    fmt::format("quantile=\"{}\"", quantile));
      }
      latency.Add(labels, static_cast<double>(row.latency.max()) / 1e9, "", "quantile=\"1\"");
      latency.Add(labels, static_cast<double>(row.latency.sum()) / 1e9, "_sum");
      latency.Add(labels, static_cast<double>(row.latency.count()), "_count");
    }
  }
  std::string out;
  for (const Family* f :
       {&start, &succeeded, &bytes, &ops, &elapsed, &throughput, &iops, &cpu, &latency}) {
    out += f->Render();
  }
  return out;
}

}  // namespace stormark::controller
