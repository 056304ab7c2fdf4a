#include "controller/report/summary.h"

#include <algorithm>
#include <unordered_set>

#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::controller {

using stormark::v1::PhaseResult;

RowSummary SummarizeHost(const HostOutcome& host) {
  RowSummary row;
  row.host = host.host;
  row.target = host.target;
  row.transport = host.transport;
  row.hosts = 1;
  row.error = host.error;
  if (!host.result) {
    row.status = "error";
    return row;
  }
  const PhaseResult& r = *host.result;
  row.status = r.state() == PhaseResult::SUCCEEDED ? "succeeded"
               : r.state() == PhaseResult::ABORTED ? "aborted"
                                                   : "failed";
  row.bytes = r.bytes();
  row.ops = r.ops();
  row.elapsed_seconds = static_cast<double>(r.elapsed_nanos()) / 1e9;
  if (r.elapsed_nanos() > 0) {
    row.bytes_per_second = static_cast<double>(r.bytes()) / row.elapsed_seconds;
    row.cpu_percent = 100.0 * static_cast<double>(r.cpu_user_nanos() + r.cpu_system_nanos()) /
                      static_cast<double>(r.elapsed_nanos());
  }
  row.warnings.assign(r.warnings().begin(), r.warnings().end());
  auto histogram = common::LatencyHistogram::FromProto(r.latency());
  if (histogram.ok()) {
    row.latency = std::move(*histogram);
  } else if (row.status == "succeeded") {
    row.status = "error";
    row.error =
        common::StrCat("bad latency histogram from the agent: ", histogram.status().message());
  }
  return row;
}

PhaseSummary Summarize(const PhaseOutcome& outcome) {
  PhaseSummary summary;
  RowSummary all;
  all.host = "all hosts";
  all.status = "succeeded";
  int64_t first_start = INT64_MAX, last_end = INT64_MIN;
  double cpu_sum = 0;
  std::unordered_set<std::string> seen_warnings;  // all.warnings, to keep them once each

  for (const HostOutcome& host : outcome.hosts) {
    RowSummary row = SummarizeHost(host);
    if (row.status == "succeeded") {
      const PhaseResult& r = *host.result;
      all.bytes += row.bytes;
      all.ops += row.ops;
      all.latency.Merge(row.latency);
      all.hosts += 1;
      cpu_sum += row.cpu_percent;
      const int64_t start = r.start_unix_nanos() - host.clock.offset_nanos;
      first_start = std::min(first_start, start);
      last_end = std::max(last_end, start + r.elapsed_nanos());
      for (const auto& w : row.warnings) {
        std::string tagged = common::StrCat(row.host, ": ", w);
        if (seen_warnings.insert(tagged).second) all.warnings.push_back(std::move(tagged));
      }
    } else {
      ++summary.failed;
    }
    summary.rows.push_back(std::move(row));
  }
  if (all.hosts > 0 && outcome.mode == RunMode::kSequential) {
    // The hosts never ran together: no figure of the row may read as an aggregate, so every
    // one is the mean of the hosts' (a sum of elapsed times would pass for one long run).
    all.host = "mean of hosts";
    double rate_sum = 0, elapsed_sum = 0;
    for (const RowSummary& row : summary.rows) {
      if (row.status != "succeeded") continue;
      elapsed_sum += row.elapsed_seconds;
      rate_sum += row.bytes_per_second;
    }
    all.elapsed_seconds = elapsed_sum / all.hosts;
    all.bytes_per_second = rate_sum / all.hosts;
    all.bytes /= static_cast<uint64_t>(all.hosts);
    all.ops /= static_cast<uint64_t>(all.hosts);
    all.cpu_percent = cpu_sum / all.hosts;
  } else if (all.hosts > 0) {
    all.elapsed_seconds = static_cast<double>(last_end - first_start) / 1e9;
    if (all.elapsed_seconds > 0) {
      all.bytes_per_second = static_cast<double>(all.bytes) / all.elapsed_seconds;
    }
    all.cpu_percent = cpu_sum / all.hosts;
  }
  if (all.hosts > 0) {
    // Hosts run one after another are judged only when their phase had not ended: the mean
    // is then of the hosts that had reported (validity.h).
    if (outcome.mode != RunMode::kSequential || !outcome.ended) {
      summary.validity = JudgeValidity(outcome);
    }
    if (summary.validity.invalid()) {
      all.invalid = true;
      all.warnings.insert(all.warnings.begin(), common::StrCat("INVALID: ", summary.validity.why));
    }
    summary.all_hosts = std::move(all);
  }
  return summary;
}

bool IsPartial(const RowSummary& row) {
  return row.status == "aborted" && row.ops > 0 && row.elapsed_seconds > 0 && row.hosts <= 1;
}

std::string PartialNote(const RowSummary& row) {
  return fmt::format("partial: its figures cover the {:.2f} s until it was aborted",
                     row.elapsed_seconds);
}

}  // namespace stormark::controller
