#include "controller/fio/fio_json.h"

#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "common/atomic_file.h"
#include "common/histogram.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/version.h"
#include "controller/report/summary.h"
#include "controller/run/full_phase.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller::fio {
namespace {

using nlohmann::json;

constexpr const char* kDirections[] = {"read", "write", "trim"};
// fio's default percentile_list.
constexpr double kPercentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                   80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

// One direction of one host (or of all hosts) in a phase.
struct Direction {
  uint64_t bytes = 0;
  uint64_t ops = 0;
  common::LatencyHistogram latency;
};

using Directions = std::map<std::string, Direction>;

// The per-direction figures of `measurements`.
Directions DirectionsIn(
    const google::protobuf::RepeatedPtrField<stormark::v1::Measurement>& measurements) {
  Directions out;
  for (const auto& m : measurements) {
    if (m.name() != "read" && m.name() != "write" && m.name() != "trim") continue;
    Direction& d = out[m.name()];
    d.bytes += m.bytes();
    d.ops += m.ops();
    auto h = common::LatencyHistogram::FromProto(m.latency());
    if (h.ok()) d.latency.Merge(*h);
  }
  return out;
}

// The per-direction figures of one host's result, or nullopt when the workload gives none.
std::optional<Directions> DirectionsOf(const PhaseOutcome& phase,
                                       const stormark::v1::PhaseResult& r) {
  Directions out = DirectionsIn(r.measurements());
  if (!out.empty()) return out;
  // One direction for the whole phase: a stream's, or a trim's (fio's trim block).
  const stormark::v1::PhaseSpec& spec = phase.plan.spec;
  if (!spec.has_stream() && !spec.has_trim()) return std::nullopt;
  Direction& d = out[spec.has_trim()                                               ? "trim"
                     : spec.stream().direction() == stormark::v1::StreamSpec::READ ? "read"
                                                                                   : "write"];
  d.bytes = r.bytes();
  d.ops = r.ops();
  auto h = common::LatencyHistogram::FromProto(r.latency());
  if (h.ok()) d.latency = *h;
  return out;
}

// Mean and standard deviation from the histogram's buckets (each at its middle).
std::pair<double, double> MeanAndDeviation(const common::LatencyHistogram& h) {
  if (h.count() == 0) return {0, 0};
  const double mean = h.Mean();
  double squares = 0;
  for (uint32_t i = 0; i < common::LatencyHistogram::kBucketCount; ++i) {
    const uint64_t n = h.BucketCount(i);
    if (n == 0) continue;
    const double mid = static_cast<double>(common::LatencyHistogram::BucketLowerBound(i)) +
                       static_cast<double>(common::LatencyHistogram::BucketWidth(i)) / 2;
    squares += static_cast<double>(n) * (mid - mean) * (mid - mean);
  }
  return {mean, std::sqrt(squares / static_cast<double>(h.count()))};
}

json LatencyJson(const common::LatencyHistogram& h, bool percentiles, bool bins) {
  const auto [mean, deviation] = MeanAndDeviation(h);
  json out = {
      {"min", h.min()}, {"max", h.max()}, {"mean", mean}, {"stddev", deviation}, {"N", h.count()}};
  if (percentiles && h.count() > 0) {
    json p = json::object();
    for (double at : kPercentiles) p[fmt::format("{:.6f}", at)] = h.Percentile(at);
    out["percentile"] = std::move(p);
  }
  if (bins && h.count() > 0) {
    json b = json::object();
    for (uint32_t i = 0; i < common::LatencyHistogram::kBucketCount; ++i) {
      if (const uint64_t n = h.BucketCount(i); n > 0) {
        b[std::to_string(common::LatencyHistogram::BucketLowerBound(i))] = n;
      }
    }
    out["bins"] = std::move(b);
  }
  return out;
}

json DirectionJson(const Direction& d, double seconds, bool plus) {
  const double bw = seconds > 0 ? static_cast<double>(d.bytes) / seconds : 0;
  const double iops = seconds > 0 ? static_cast<double>(d.ops) / seconds : 0;
  return {{"io_bytes", d.bytes},
          {"io_kbytes", d.bytes / 1024},
          {"bw_bytes", static_cast<uint64_t>(bw)},
          {"bw", static_cast<uint64_t>(bw / 1024)},
          {"iops", iops},
          {"runtime", static_cast<uint64_t>(seconds * 1000)},
          {"total_ios", d.ops},
          {"short_ios", 0},
          {"drop_ios", 0},
          {"slat_ns", {{"min", 0}, {"max", 0}, {"mean", 0.0}, {"stddev", 0.0}, {"N", 0}}},
          {"clat_ns", LatencyJson(d.latency, true, plus)},
          {"lat_ns", LatencyJson(d.latency, false, plus)}};
}

json Job(const std::string& name, size_t group, const std::string& host, bool failed,
         const Directions& directions, double seconds, double cpu_user, double cpu_system,
         bool plus) {
  json job = {{"jobname", name},
              {"groupid", group},
              {"error", failed ? 1 : 0},
              {"hostname", host},
              {"job_runtime", static_cast<uint64_t>(seconds * 1000)},
              {"usr_cpu", cpu_user},
              {"sys_cpu", cpu_system}};
  for (const char* d : kDirections) {
    auto it = directions.find(d);
    job[d] = DirectionJson(it == directions.end() ? Direction() : it->second, seconds, plus);
  }
  return job;
}

double Percent(int64_t cpu_nanos, int64_t elapsed_nanos) {
  return elapsed_nanos > 0 ? 100.0 * static_cast<double>(cpu_nanos) / elapsed_nanos : 0;
}

}  // namespace

json FioJson(const RunRecord& run, bool plus, common::Status* read_back) {
  json jobs = json::array(), clients = json::array(), omitted = json::array();
  for (size_t p = 0; p < run.phases.size(); ++p) {
    const FullPhase full(run, p);
    full.KeepFirstError(read_back);
    const PhaseOutcome& phase = *full;
    Directions all;
    bool any = false, split = true;
    for (const HostOutcome& host : phase.hosts) {
      if (!host.result) continue;
      const stormark::v1::PhaseResult& r = *host.result;
      const std::optional<Directions> directions = DirectionsOf(phase, r);
      if (!directions) {
        split = false;
        break;
      }
      any = true;
      const double seconds = static_cast<double>(r.elapsed_nanos()) / 1e9;
      const double usr = Percent(r.cpu_user_nanos(), r.elapsed_nanos());
      const double sys = Percent(r.cpu_system_nanos(), r.elapsed_nanos());
      if (r.jobs_size() == 0) {
        json job = Job(phase.plan.name, p, host.host, !host.succeeded(), *directions, seconds, usr,
                       sys, plus);
        jobs.push_back(job);
        clients.push_back(std::move(job));
      }
      // A run group of unlike jobs: one entry per job, as fio gives them (the CPU is the
      // phase's, which stormark does not split by job).
      for (const auto& one : r.jobs()) {
        json job = Job(one.name(), p, host.host, !host.succeeded(),
                       DirectionsIn(one.measurements()), seconds, usr, sys, plus);
        jobs.push_back(job);
        clients.push_back(std::move(job));
      }
      for (const auto& [name, d] : *directions) {
        Direction& sum = all[name];
        sum.bytes += d.bytes;
        sum.ops += d.ops;
        sum.latency.Merge(d.latency);
      }
    }
    if (!split || !any) {
      omitted.push_back(common::StrCat(phase.plan.name, " (", common::WorkloadName(phase.plan.spec),
                                       split ? ": no host has a result" : ": no read/write split",
                                       ")"));
      continue;
    }
    const PhaseSummary summary = Summarize(phase);
    const double window = summary.all_hosts ? summary.all_hosts->elapsed_seconds : 0;
    clients.push_back(Job(phase.plan.name, p, "All clients", summary.failed > 0, all, window,
                          summary.all_hosts ? summary.all_hosts->cpu_percent : 0, 0, plus));
  }
  return {{"fio version", common::StrCat("stormark-", common::kSoftwareVersion)},
          {"timestamp", run.started_unix_nanos / 1'000'000'000},
          {"timestamp_ms", run.started_unix_nanos / 1'000'000},
          {"time", common::FormatIsoTime(run.started_unix_nanos)},
          {"global options", json::object()},
          {"jobs", std::move(jobs)},
          {"client_stats", std::move(clients)},
          {"disk_util", json::array()},
          {"stormark", {{"run_id", run.run_id}, {"omitted", std::move(omitted)}}}};
}

common::Status WriteFioJson(const RunRecord& run, const std::string& path, bool plus) {
  common::Status read_back;
  const std::string text =
      FioJson(run, plus, &read_back).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  RETURN_IF_ERROR(common::WriteFileAtomically(path, text));
  return common::Annotate(read_back, "fio JSON: written with summaries only");
}

}  // namespace stormark::controller::fio
