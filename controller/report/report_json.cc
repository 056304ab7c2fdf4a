#include "controller/report/report_json.h"

#include <google/protobuf/util/json_util.h>

#include <charconv>
#include <functional>
#include <map>

#include "common/atomic_file.h"
#include "common/cache_report.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/version.h"
#include "controller/report/run_status.h"
#include "controller/report/environment.h"
#include "controller/report/host_groups.h"
#include "controller/report/json_text_writer.h"
#include "controller/report/summary.h"
#include "controller/run/full_phase.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using nlohmann::json;

// The protobuf JSON mapping quotes 64-bit integers ("size_bytes": "1048576"), which JSON
// readers then take for text: turns them back into numbers, through nested messages too.
void Unquote64BitFields(const google::protobuf::Descriptor& type, json* object) {
  using google::protobuf::FieldDescriptor;
  for (int i = 0; i < type.field_count(); ++i) {
    const FieldDescriptor& field = *type.field(i);
    auto it = object->find(field.name());
    if (it == object->end()) continue;
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field.is_map()) {
      if (it->is_object()) Unquote64BitFields(*field.message_type(), &*it);
      if (it->is_array()) {
        for (json& element : *it) Unquote64BitFields(*field.message_type(), &element);
      }
      continue;
    }
    const bool is_signed = field.cpp_type() == FieldDescriptor::CPPTYPE_INT64;
    if (!is_signed && field.cpp_type() != FieldDescriptor::CPPTYPE_UINT64) continue;
    const auto unquote = [is_signed](json& value) {
      if (!value.is_string()) return;
      const std::string& text = value.get_ref<const std::string&>();
      const char* end = text.data() + text.size();
      int64_t s = 0;
      uint64_t u = 0;
      // Anything but a whole number is left as the mapping wrote it, and so is one beyond
      // 2^53, which JavaScript and jq would round (a seed must survive a copy).
      constexpr uint64_t kExact = uint64_t{1} << 53;
      if (is_signed && std::from_chars(text.data(), end, s).ptr == end &&
          s >= -static_cast<int64_t>(kExact) && s <= static_cast<int64_t>(kExact)) {
        value = s;
      }
      if (!is_signed && std::from_chars(text.data(), end, u).ptr == end && u <= kExact) value = u;
    };
    if (it->is_array()) {
      for (json& element : *it) unquote(element);
    } else {
      unquote(*it);
    }
  }
}

json LatencyJson(const common::LatencyHistogram& h) {
  json out = {{"unit", "ns"},
              {"count", h.count()},
              {"min", h.min()},
              {"mean", h.Mean()},
              {"p50", h.Percentile(50)},
              {"p90", h.Percentile(90)},
              {"p99", h.Percentile(99)},
              {"p99_9", h.Percentile(99.9)},
              {"p99_99", h.Percentile(99.99)},
              {"max", h.max()}};
  stormark::v1::Histogram proto;
  h.ToProto(&proto);
  out["buckets"] = {{"sub_bucket_bits", proto.sub_bucket_bits()},
                    {"index", proto.bucket_index()},
                    {"count", proto.bucket_count()}};
  return out;
}

json RowJson(const RowSummary& row) {
  return {{"host", row.host},
          {"target", row.target},
          {"status", row.status},
          {"error", row.error},
          {"bytes", row.bytes},
          {"ops", row.ops},
          {"elapsed_seconds", row.elapsed_seconds},
          {"bytes_per_second", row.bytes_per_second},
          {"cpu_percent", row.cpu_percent},
          {"latency", LatencyJson(row.latency)},
          {"warnings", row.warnings},
          {"partial", IsPartial(row)},
          {"invalid", row.invalid},
          {"hosts", row.hosts}};
}

// The verdict of validity.h. Times are on the controller's clock; null where not judged.
json ValidityJson(const PhaseValidity& v) {
  json out = {{"verdict", v.invalid()  ? "invalid"
                          : v.judged() ? "valid"
                                       : "not_judged"},
              {"why", v.why},
              {"start_spread_limit", v.limit}};
  if (!v.judged()) return out;
  out["hosts"] = v.hosts;
  out["start_spread_nanos"] = v.spread_nanos;
  out["clock_uncertainty_nanos"] = v.uncertainty_nanos;
  out["shortest_host_nanos"] = v.shortest_nanos;
  out["share"] = v.share();
  out["first_start_unix_nanos"] = v.first_start;
  out["last_start_unix_nanos"] = v.last_start;
  out["first_end_unix_nanos"] = v.first_end;
  out["last_end_unix_nanos"] = v.last_end;
  const double seconds = static_cast<double>(v.window_nanos) / 1e9;
  out["all_running"] = {
      {"seconds", seconds},
      {"bytes", v.window_bytes},
      {"ops", v.window_ops},
      {"bytes_per_second",
       seconds > 0 ? json(static_cast<double>(v.window_bytes) / seconds) : json(nullptr)},
      {"ops_per_second",
       seconds > 0 ? json(static_cast<double>(v.window_ops) / seconds) : json(nullptr)},
      {"estimated", v.window_estimated}};
  return out;
}

json VerifyJson(const stormark::v1::VerifyReport& v) {
  json mismatches = json::array();
  for (const auto& m : v.first_mismatches()) {
    mismatches.push_back({{"offset", m.offset()},
                          {"kind", m.kind()},
                          {"field", m.field()},
                          {"expected", m.expected()},
                          {"actual", m.actual()},
                          {"during", m.during()}});
  }
  return {{"unit_bytes", v.unit_bytes()},
          {"units_checked", v.units_checked()},
          {"mismatches", v.mismatches()},
          {"first_mismatches", std::move(mismatches)}};
}

json MeasurementsJson(
    const google::protobuf::RepeatedPtrField<stormark::v1::Measurement>& measurements,
    const std::string& host) {
  json out = json::array();
  for (const auto& m : measurements) {
    const double seconds = static_cast<double>(m.elapsed_nanos()) / 1e9;
    const double cpu = static_cast<double>(m.cpu_user_nanos() + m.cpu_system_nanos()) / 1e9;
    auto histogram = common::LatencyHistogram::FromProto(m.latency());
    out.push_back(
        {{"host", host},
         {"name", m.name()},
         {"skipped", m.skipped()},
         {"too_fast", m.too_fast()},
         {"bytes", m.bytes()},
         {"ops", m.ops()},
         {"elapsed_seconds", seconds},
         // A rate of a too-fast test is not a figure; it is null, as bonnie++ prints +++++.
         {"bytes_per_second",
          seconds > 0 && !m.too_fast() ? json(m.bytes() / seconds) : json(nullptr)},
         {"ops_per_second", seconds > 0 && !m.too_fast() ? json(m.ops() / seconds) : json(nullptr)},
         {"cpu_percent", seconds > 0 ? json(100.0 * cpu / seconds) : json(nullptr)},
         {"latency", histogram.ok() ? LatencyJson(*histogram) : json(nullptr)}});
  }
  return out;
}

json MapJson(const google::protobuf::Map<std::string, std::string>& map) {
  return json(std::map<std::string, std::string>(map.begin(), map.end()));
}

json SweepPointJson(const SweepPoint& point) {
  json out = json::object();
  for (const auto& [key, value] : point) out[key] = value;
  return out;
}

json WorkloadJson(const PhasePlan& plan) {
  const std::string_view name = common::WorkloadName(plan.spec);
  json out = {{"type", name.empty() ? "unknown" : std::string(name)}};
  const WorkloadKind* kind = KindOf(plan.spec);
  if (kind != nullptr && kind->json != nullptr) {
    out.update(kind->json(plan.spec));
    return out;
  }
  // Other workloads: their spec's fields under their protobuf names.
  const google::protobuf::FieldDescriptor* field =
      plan.spec.GetDescriptor()->FindFieldByName(std::string(name));
  if (field == nullptr) return out;
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  if (google::protobuf::util::MessageToJsonString(
          plan.spec.GetReflection()->GetMessage(plan.spec, field), &text, options)
          .ok()) {
    json fields = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (fields.is_object()) Unquote64BitFields(*field->message_type(), &fields);
    out.update(fields);
  }
  return out;
}

// What every row of a phase's JSON needs besides its host: the phase's summary, and the
// hosts' environments compared.
struct PhaseRows {
  explicit PhaseRows(const PhaseOutcome& outcome) : summary(Summarize(outcome)) {
    for (const HostOutcome& host : outcome.hosts) {
      names.push_back(host.host);
      envs.push_back(RowEnvironment(host, nullptr));
    }
    differing = DifferingKeys(envs);
  }
  PhaseSummary summary;
  std::vector<std::string> names;
  std::vector<Environment> envs;
  std::vector<std::string> differing;
};

// A phase's object, but for its "results" (ResultJson, one per host).
json PhaseJsonWithoutResults(const PhaseOutcome& outcome, size_t index, const PhaseRows& rows) {
  json phase = {{"index", index},
                {"name", outcome.plan.name},
                {"phase_id", outcome.phase_id},
                {"description", outcome.plan.Describe()},
                {"repetition", outcome.plan.repetition},
                {"sweep_point", SweepPointJson(outcome.plan.sweep_point)},
                {"workload", WorkloadJson(outcome.plan)},
                {"mode", outcome.mode == RunMode::kSequential ? "sequential" : "concurrent"},
                {"cache", common::CacheModeName(outcome.plan.spec.cache())},
                {"start_at_unix_nanos", outcome.start_at_unix_nanos},
                {"start_lead_nanos", outcome.start_lead_nanos},
                {"start_skew_nanos",
                 outcome.start_skew_nanos ? json(*outcome.start_skew_nanos) : json(nullptr)},
                {"start_skew_uncertainty_nanos", outcome.start_skew_uncertainty_nanos}};
  phase["environment_differs"] = {{"keys", rows.differing},
                                  {"note", FormatDiffers(rows.names, rows.envs, rows.differing)}};
  phase["all_hosts"] = rows.summary.all_hosts ? RowJson(*rows.summary.all_hosts) : json(nullptr);
  phase["validity"] = ValidityJson(rows.summary.validity);
  return phase;
}

// Host i's row of a phase's "results".
json ResultJson(const PhaseOutcome& outcome, const PhaseRows& rows, size_t i) {
  json row = RowJson(rows.summary.rows[i]);
  const HostOutcome& host = outcome.hosts[i];
  row["via"] = host.transport;
  row["transport_note"] = host.transport_note;
  row["environment_differs"] = RowDiffers(i, rows.envs, rows.differing);
  row["clock_offset_nanos"] = host.clock.offset_nanos;
  // How good that offset is for this phase (clock_sync.h BracketPhase): half the best round
  // trip, plus how far the offset moved between the syncs around the phase.
  row["clock_uncertainty_nanos"] = host.clock.uncertainty_nanos;
  row["clock_rtt_nanos"] = host.clock.rtt_nanos;
  row["clock_moved_nanos"] = host.clock.moved_nanos;
  if (host.result) {
    const auto& r = *host.result;
    row["start_unix_nanos"] = r.start_unix_nanos();
    row["end_unix_nanos"] = r.end_unix_nanos();
    row["start_late_nanos"] = r.start_late_nanos();
    row["cpu_user_nanos"] = r.cpu_user_nanos();
    row["cpu_system_nanos"] = r.cpu_system_nanos();
    json series = json::array();
    stormark::v1::PhaseResult packed;
    for (const auto& s : OwnSeries(host, &packed)) {
      series.push_back({{"host", host.host},
                        {"offset_nanos", s.offset_nanos()},
                        {"length_nanos", s.length_nanos()},
                        {"bytes", s.bytes()},
                        {"ops", s.ops()}});
    }
    row["series"] = std::move(series);
    const auto& c = r.cache();
    row["cache"] = {{"requested", common::CacheModeName(c.requested())},
                    {"synced", c.synced()},
                    {"sync_nanos", c.sync_nanos()},
                    {"dropped", c.dropped()},
                    {"drop_nanos", c.drop_nanos()},
                    {"not_done", c.not_done()}};
    row["environment"] = {{"host", MapJson(r.host_environment())},
                          {"target", MapJson(r.target_environment())}};
    if (!r.tuning().empty()) {
      json tuning = json::object();
      for (const auto& [key, value] : r.tuning()) tuning[key] = value;
      row["tuning"] = std::move(tuning);
    }
    if (!r.device_stats().empty()) {
      json stats = json::object();
      for (const auto& [key, value] : r.device_stats()) stats[key] = value;
      row["device_stats"] = std::move(stats);
    }
    if (r.measurements_size() > 0) {
      row["measurements"] = MeasurementsJson(r.measurements(), host.host);
    }
    // A run group of unlike jobs: each job's own figures (the measurements add them up).
    if (r.jobs_size() > 0) {
      json jobs = json::array();
      for (const auto& job : r.jobs()) {
        json one = {{"name", job.name()},
                    {"measurements", MeasurementsJson(job.measurements(), host.host)}};
        if (job.has_verify()) one["verify"] = VerifyJson(job.verify());
        jobs.push_back(std::move(one));
      }
      row["jobs"] = std::move(jobs);
    }
    if (r.last_done_nanos() > 0) {
      row["stonewall"] = {{"first_done_nanos", r.first_done_nanos()},
                          {"first_done_bytes", r.first_done_bytes()},
                          {"first_done_ops", r.first_done_ops()},
                          {"last_done_nanos", r.last_done_nanos()}};
    }
    if (r.has_verify()) row["verify"] = VerifyJson(r.verify());
    if (!r.stuck_worker().empty()) row["stuck_worker"] = r.stuck_worker();
    if (!r.device_stats().empty()) {
      row["device_stats"] = json(
          std::map<std::string, std::string>(r.device_stats().begin(), r.device_stats().end()));
    }
    if (!r.resolved().empty()) {
      json resolved = json::object();
      for (const auto& [key, value] : r.resolved()) resolved[key] = value;
      row["resolved"] = std::move(resolved);
    }
  }
  return row;
}

json PhaseJson(const PhaseOutcome& outcome, size_t index) {
  const PhaseRows rows(outcome);
  json phase = PhaseJsonWithoutResults(outcome, index, rows);
  json results = json::array();
  for (size_t i = 0; i < rows.summary.rows.size(); ++i) {
    results.push_back(ResultJson(outcome, rows, i));
  }
  phase["results"] = std::move(results);
  return phase;
}

// The run's object, but for its "phases" (PhaseJson, one per phase).
json RunJsonWithoutPhases(const RunRecord& run) {
  json agents = json::array();
  for (const AgentRecord& a : run.agents) {
    json targets = json::array();
    for (const auto& t : a.info.targets()) {
      targets.push_back({{"host", a.host},
                         {"name", t.name()},
                         {"kind", t.kind()},
                         {"path", t.path()},
                         {"filesystem", t.filesystem()},
                         {"mount_options", t.mount_options()},
                         {"device", t.device()},
                         {"free_bytes", t.free_bytes()},
                         {"total_bytes", t.total_bytes()},
                         {"size_bytes", t.size_bytes()},
                         {"logical_block_size", t.logical_block_size()},
                         {"disposable", t.disposable()},
                         {"block_kind", t.block_kind()},
                         {"device_queue", MapJson(t.device_queue())},
                         {"transport", t.transport()},
                         {"transport_detail", t.transport_detail()},
                         {"environment", MapJson(t.environment())}});
    }
    json labels = json::object();
    for (const auto& [key, value] : a.labels) labels[key] = value;
    agents.push_back({{"host", a.host},
                      {"labels", std::move(labels)},
                      {"error", a.error},
                      {"hostname", a.info.hostname()},
                      {"agent_version", a.info.agent_version()},
                      {"protocol", common::FormatVersion(a.info.protocol())},
                      {"kernel", a.info.kernel()},
                      {"cpu_model", a.info.cpu_model()},
                      {"cpu_count", a.info.cpu_count()},
                      {"ram_bytes", a.info.ram_bytes()},
                      {"environment", MapJson(a.info.environment())},
                      {"clock_offset_nanos", a.clock.offset_nanos},
                      {"clock_rtt_nanos", a.clock.rtt_nanos},
                      {"targets", std::move(targets)}});
  }
  json hooks = json::array();
  for (const HookOutcome& hook : run.hooks) {
    json failures = json::array();
    for (const auto& [host, why] : hook.failures) {
      failures.push_back({{"host", host}, {"error", why}});
    }
    hooks.push_back({{"before_phase", hook.before_phase},
                     {"what", hook.what},
                     {"line", hook.line},
                     {"sweep_point", hook.point},
                     {"after", hook.after},
                     {"ok", hook.ok()},
                     {"hosts", hook.hosts},
                     {"longest_nanos", hook.longest_nanos},
                     {"failures", std::move(failures)}});
  }
  json skipped = json::array();
  for (const SkippedPoint& point : run.skipped_points) {
    skipped.push_back({{"before_phase", point.before_phase}, {"sweep_point", point.point}});
  }
  const RunStatus status = StatusOf(run);
  return {{"schema", kJsonSchema},
          {"stormark_version", std::string(common::kSoftwareVersion)},
          {"run_id", run.run_id},
          {"started_at", common::FormatIsoTime(run.started_unix_nanos)},
          {"started_unix_nanos", run.started_unix_nanos},
          {"finished_unix_nanos", run.finished_unix_nanos},
          {"interrupted", run.interrupted},
          {"status", status.status},
          {"reasons", status.reasons},
          {"agents", std::move(agents)},
          {"hooks", std::move(hooks)},
          {"skipped_points", std::move(skipped)}};
}

// The report's text, one phase and one host's row at a time (at 10,000 hosts the document as
// one tree held several times the results' own memory), handed to `spill` in pieces when it
// is given, else returned whole. Indented for a run of up to kCollapseAbove agents, which a
// reader may open; compact beyond, where the indentation made the text 3.7 times as long
// (411 MiB at 10,000 hosts) and most of the time from the last result to the exit.
std::string WriteRunJson(const RunRecord& run, const common::PieceFn& spill,
                         common::Status* read_back) {
  JsonTextWriter writer(spill, run.agents.size() > kCollapseAbove);
  writer.ObjectWith(RunJsonWithoutPhases(run), 0, "phases", [&](int level) {
    writer.Array(run.phases.size(), level, [&](size_t p, int at) {
      const FullPhase full(run, p);  // One phase's whole results at a time.
      full.KeepFirstError(read_back);
      const PhaseOutcome& outcome = *full;
      const PhaseRows rows(outcome);
      writer.ObjectWith(PhaseJsonWithoutResults(outcome, p, rows), at, "results", [&](int in) {
        writer.Array(rows.summary.rows.size(), in, [&](size_t i, int row_at) {
          writer.Value(ResultJson(outcome, rows, i), row_at);
          writer.Spill();
        });
      });
    });
  });
  return writer.Finish();
}

}  // namespace

json RunToJson(const RunRecord& run) {
  json j = RunJsonWithoutPhases(run);
  json phases = json::array();
  for (size_t i = 0; i < run.phases.size(); ++i) phases.push_back(PhaseJson(*FullPhase(run, i), i));
  j["phases"] = std::move(phases);
  return j;
}

std::string RunJsonText(const RunRecord& run, common::Status* read_back) {
  return WriteRunJson(run, nullptr, read_back);
}

void PutRunJson(const RunRecord& run, const common::PieceFn& put, common::Status* read_back) {
  WriteRunJson(run, put, read_back);
}

common::Status WriteJsonReport(const RunRecord& run, const std::string& path) {
  common::Status read_back;
  common::Status written = common::WriteFileAtomically(
      path, [&](const common::PieceFn& put) { PutRunJson(run, put, &read_back); });
  if (!written.ok()) return written;
  return common::Annotate(read_back, "--json: written with summaries only");
}

}  // namespace stormark::controller
