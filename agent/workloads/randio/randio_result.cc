// What a randio run reports (RandioWorkload::AddToResult): the measurements of each
// direction with their series, each job's own for a run group, and what the run settled on.
#include "agent/targets/target_caps.h"
#include "agent/workloads/randio/randio.h"
#include "common/recorder.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::agent {
namespace {

using stormark::v1::RandioSpec;

std::string PatternName(RandioSpec::Pattern rw) {
  std::string name = RandioSpec::Pattern_Name(rw);
  return common::ToLower(name);
}

}  // namespace

void RandioWorkload::AddMeasurements(
    size_t begin, size_t end, int64_t elapsed_nanos,
    google::protobuf::RepeatedPtrField<stormark::v1::Measurement>* out, bool latency) const {
  auto add = [&](const char* name, auto recorder_of) {
    // Each recorder's series counts from the start of the timed region: merged from 0, the
    // series ends at the region's length.
    common::Recorder merged(0, series_interval_nanos_);
    for (size_t j = begin; j < end; ++j) {
      if (const common::Recorder* r = recorder_of(*jobs_[j])) merged.Merge(*r);
    }
    if (merged.ops() == 0) return;
    stormark::v1::Measurement* m = out->Add();
    m->set_name(name);
    m->set_bytes(merged.bytes());
    m->set_ops(merged.ops());
    m->set_elapsed_nanos(elapsed_nanos);
    if (latency) merged.latency().ToProto(m->mutable_latency());
    merged.SeriesToProto(elapsed_nanos, m->mutable_series());
  };
  add("read", [](const RandioJob& j) { return j.read_recorder(); });
  add("write", [](const RandioJob& j) { return j.write_recorder(); });
  add("flush", [](const RandioJob& j) { return j.flush_recorder(); });
}

void RandioWorkload::AddResolved(const Member& m, const std::string& prefix,
                                 stormark::v1::PhaseResult* result) const {
  auto& resolved = *result->mutable_resolved();
  const RandioSpec& spec = m.spec;
  if (!prefix.empty()) resolved[prefix + "name"] = spec.name();
  resolved[prefix + "rw"] = PatternName(spec.rw());
  resolved[prefix + "bs"] = m.bs_min == m.bs_max
                                ? common::FormatSizeShort(m.bs_min)
                                : common::StrCat(common::FormatSizeShort(m.bs_min), "-",
                                                 common::FormatSizeShort(m.bs_max));
  auto split_text = [](const auto& split) {
    std::string text;
    for (const auto& share : split) {
      if (!text.empty()) text += ":";
      text += common::StrCat(common::FormatSizeShort(share.bs()), "/", share.percent());
    }
    return text;
  };
  if (spec.bssplit_size() > 0) resolved[prefix + "bssplit"] = split_text(spec.bssplit());
  if (spec.write_bssplit_size() > 0) {
    resolved[prefix + "write_bssplit"] = split_text(spec.write_bssplit());
  }
  resolved[prefix + "iodepth"] = common::StrCat(m.iodepth);
  resolved[prefix + "numjobs"] = common::StrCat(m.jobs_count);
  resolved[prefix + "size"] = common::FormatSizeShort(m.region_size);
  resolved[prefix + "offset"] = common::FormatSizeShort(m.offset);
  if (m.offset_increment != 0) {
    resolved[prefix + "offset_increment"] = common::FormatSizeShort(m.offset_increment);
  }
}

void RandioWorkload::AddToResult(stormark::v1::PhaseResult* result) const {
  AddMeasurements(0, jobs_.size(), result->elapsed_nanos(), result->mutable_measurements());
  if (members_.size() > 1) {
    for (const Member& m : members_) {
      auto* job = result->add_jobs();
      job->set_name(m.spec.name());
      AddMeasurements(m.first_job, m.first_job + m.jobs_count, result->elapsed_nanos(),
                      job->mutable_measurements());
      if (m.book != nullptr) *job->mutable_verify() = m.book->Report();
    }
  }
  if (spec_.thread_series()) {
    // fio's per-job logs of numjobs clones: each thread's series.
    for (size_t j = 0; j < jobs_.size(); ++j) {
      auto* thread = result->add_threads();
      thread->set_name(common::StrCat("thread ", j));
      AddMeasurements(j, j + 1, result->elapsed_nanos(), thread->mutable_measurements(),
                      /*latency=*/false);
    }
  }
  if (jobs_.size() > 1) {
    result->set_first_done_nanos(first_done_nanos_);
    result->set_last_done_nanos(last_done_nanos_);
    result->set_first_done_bytes(first_done_bytes_);
    result->set_first_done_ops(first_done_ops_);
  }
  if (auto verify = VerifyTotals()) *result->mutable_verify() = std::move(*verify);
  for (const auto& w : run_warnings_) result->add_warnings(w);

  auto& resolved = *result->mutable_resolved();
  if (members_.size() == 1) {
    AddResolved(members_[0], "", result);
  } else if (members_.size() > 1) {
    // A run group: each job's settings under "job1.", "job2.", ... in the group's order.
    resolved["jobs"] = common::StrCat(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) {
      AddResolved(members_[i], common::StrCat("job", i + 1, "."), result);
    }
  }
  resolved["engine"] =
      !CapsOf(target_).engines ? target_.kind : std::string(EngineName(EngineOf(spec_)));
  resolved["direct"] = spec_.direct() ? "true" : "false";
  resolved["seed"] = common::StrCat(seed_);
  if (device_ != nullptr) {
    resolved["device"] = device_->Describe();
    for (const auto& [key, value] : device_->Stats())
      (*result->mutable_device_stats())[key] = value;
  }
}

}  // namespace stormark::agent
