#include "controller/fio/fio_logs.h"

#include <map>

#include "common/atomic_file.h"
#include "common/strings.h"
#include "controller/run/full_phase.h"
#include "fmt/format.h"

namespace stormark::controller::fio {
namespace {

using common::StrCat;
using Series = google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>;

// One direction's series, by fio's ddir number.
using Directions = std::map<int, const Series*>;

int DdirOf(const std::string& name) {
  if (name == "read") return 0;
  if (name == "write") return 1;
  if (name == "trim") return 2;
  return -1;
}

using Measurements = google::protobuf::RepeatedPtrField<stormark::v1::Measurement>;

Directions DirectionsOf(const Measurements& measurements) {
  Directions out;
  for (const auto& m : measurements) {
    if (const int ddir = DdirOf(m.name()); ddir >= 0 && m.series_size() > 0) {
      out[ddir] = &m.series();
    }
  }
  return out;
}

// The series of job `k` of a host's result.
Directions DirectionsOf(const PhaseOutcome& phase, const stormark::v1::PhaseResult& r, size_t k) {
  Directions out;
  const Measurements* measurements = nullptr;
  if (r.jobs_size() > 0) {
    if (k < static_cast<size_t>(r.jobs_size()))
      measurements = &r.jobs(static_cast<int>(k)).measurements();
  } else if (k == 0) {
    measurements = &r.measurements();
  }
  if (measurements != nullptr) out = DirectionsOf(*measurements);
  if (!out.empty() || k != 0) return out;
  // A workload of one direction: the phase's own series.
  const stormark::v1::PhaseSpec& spec = phase.plan.spec;
  if (spec.has_trim()) out[2] = &r.series();
  if (spec.has_stream()) {
    out[spec.stream().direction() == stormark::v1::StreamSpec::READ ? 0 : 1] = &r.series();
  }
  return out;
}

enum class Kind { kBw, kIops, kLat };

std::string LogText(const Directions& directions, Kind kind, int64_t base_ms) {
  std::string text;
  size_t intervals = 0;
  for (const auto& [ddir, series] : directions)
    intervals = std::max<size_t>(intervals, series->size());
  for (size_t i = 0; i < intervals; ++i) {
    for (const auto& [ddir, series] : directions) {
      if (i >= static_cast<size_t>(series->size())) continue;
      const stormark::v1::IntervalSample& s = (*series)[static_cast<int>(i)];
      if (s.ops() == 0 || s.length_nanos() <= 0) continue;
      const double seconds = static_cast<double>(s.length_nanos()) / 1e9;
      uint64_t value = 0;
      switch (kind) {
        case Kind::kBw:
          value = static_cast<uint64_t>(static_cast<double>(s.bytes()) / seconds / 1024 + 0.5);
          break;
        case Kind::kIops:
          value = static_cast<uint64_t>(static_cast<double>(s.ops()) / seconds + 0.5);
          break;
        case Kind::kLat:
          value = (s.latency_sum_nanos() + s.ops() / 2) / s.ops();
          break;
      }
      const int64_t end_ms = (s.offset_nanos() + s.length_nanos() + 500'000) / 1'000'000;
      text += fmt::format("{}, {}, {}, 0\n", base_ms + end_ms, value, ddir);
    }
  }
  return text;
}

// The host's name as a file name suffix.
std::string FileSafe(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  return out.empty() || out == "." || out == ".." ? "host" : out;
}

}  // namespace

std::vector<FioLogFile> FioLogs(const RunRecord& run, common::Status* read_back) {
  std::vector<FioLogFile> files;
  std::map<std::string, int> runs_of;     // phase name -> runs seen so far
  std::map<std::string, size_t> file_of;  // path -> its index in `files`
  for (size_t p = 0; p < run.phases.size(); ++p) {
    if (run.phases[p].plan.fio_logs.empty()) continue;
    const FullPhase full(run, p);
    full.KeepFirstError(read_back);
    if (!full.status().ok()) continue;  // Summaries have no intervals to log.
    const PhaseOutcome& phase = *full;
    const int nth = ++runs_of[phase.plan.name];
    const std::string again = nth > 1 ? StrCat("-", nth) : "";
    for (const HostOutcome& host : phase.hosts) {
      stormark::v1::PhaseResult whole;  // One host's series unpacked at a time.
      const stormark::v1::PhaseResult* with_series = WithSeries(host, &whole);
      if (with_series == nullptr) continue;
      const stormark::v1::PhaseResult& r = *with_series;
      int first_thread = 0;  // of job k, in r.threads
      for (size_t k = 0; k < phase.plan.fio_logs.size(); ++k) {
        const PhasePlan::FioLog& log = phase.plan.fio_logs[k];
        const int64_t base_ms =
            log.unix_epoch ? (r.start_unix_nanos() - host.clock.offset_nanos) / 1'000'000 : 0;
        auto add = [&](const Directions& directions, int number, const std::string& prefix,
                       const char* type, Kind kind) {
          if (prefix.empty()) return;
          const std::string x = log.per_job ? StrCat(".", number) : "";
          std::string path = StrCat(prefix, again, "_", type, x, ".log.", FileSafe(host.host));
          std::string text = LogText(directions, kind, base_ms);
          // per_job_logs=0: the jobs of one name share a file, one after another.
          const auto shared = file_of.find(path);
          if (shared != file_of.end()) {
            files[shared->second].text += text;
          } else {
            file_of.emplace(path, files.size());
            files.push_back({std::move(path), std::move(text)});
          }
        };
        auto add_all = [&](const Directions& directions, int number) {
          add(directions, number, log.bw, "bw", Kind::kBw);
          add(directions, number, log.iops, "iops", Kind::kIops);
          add(directions, number, log.lat, "lat", Kind::kLat);
          add(directions, number, log.lat, "clat", Kind::kLat);
        };
        if (log.clones > 1 && r.threads_size() >= first_thread + log.clones) {
          for (int c = 0; c < log.clones; ++c) {
            add_all(DirectionsOf(r.threads(first_thread + c).measurements()),
                    log.thread_number + c);
          }
        } else {
          add_all(DirectionsOf(phase, r, k), log.thread_number);  // an agent without threads
        }
        first_thread += log.clones;
      }
    }
  }
  return files;
}

common::Status WriteFioLogs(const RunRecord& run, std::vector<std::string>* written) {
  common::Status first, read_back;
  for (const FioLogFile& file : FioLogs(run, &read_back)) {
    common::Status s = common::WriteFileAtomically(file.path, file.text);
    if (s.ok()) {
      written->push_back(file.path);
    } else if (first.ok()) {
      first = common::Annotate(s, "fio log");
    }
  }
  return first.ok() ? common::Annotate(read_back, "fio logs") : first;
}

}  // namespace stormark::controller::fio
