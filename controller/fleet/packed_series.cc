#include "controller/fleet/packed_series.h"

namespace stormark::controller {

using stormark::v1::PhaseResult;

std::string PackSeries(PhaseResult* result) {
  PhaseResult series;
  series.mutable_series()->Swap(result->mutable_series());
  for (auto& m : *result->mutable_measurements()) {
    series.add_measurements()->mutable_series()->Swap(m.mutable_series());
  }
  for (auto& job : *result->mutable_jobs()) {
    auto* packed_job = series.add_jobs();
    for (auto& m : *job.mutable_measurements()) {
      packed_job->add_measurements()->mutable_series()->Swap(m.mutable_series());
    }
  }
  series.mutable_threads()->Swap(result->mutable_threads());
  return series.SerializeAsString();
}

bool UnpackSeries(const std::string& packed, PhaseResult* result) {
  PhaseResult series;
  if (!series.ParseFromString(packed) ||
      series.measurements_size() != result->measurements_size() ||
      series.jobs_size() != result->jobs_size()) {
    return false;
  }
  for (int j = 0; j < series.jobs_size(); ++j) {
    if (series.jobs(j).measurements_size() != result->jobs(j).measurements_size()) return false;
  }
  result->mutable_series()->Swap(series.mutable_series());
  for (int m = 0; m < series.measurements_size(); ++m) {
    result->mutable_measurements(m)->mutable_series()->Swap(
        series.mutable_measurements(m)->mutable_series());
  }
  for (int j = 0; j < series.jobs_size(); ++j) {
    auto* job = result->mutable_jobs(j);
    for (int m = 0; m < job->measurements_size(); ++m) {
      job->mutable_measurements(m)->mutable_series()->Swap(
          series.mutable_jobs(j)->mutable_measurements(m)->mutable_series());
    }
  }
  result->mutable_threads()->Swap(series.mutable_threads());
  return true;
}

const google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>& OwnSeries(
    const HostOutcome& host, PhaseResult* packed) {
  if (host.result && host.packed_series.empty()) return host.result->series();
  packed->Clear();
  // A PhaseResult that holds only the series, in their places (PackSeries).
  if (host.result) (void)packed->ParseFromString(host.packed_series);
  return packed->series();
}

const PhaseResult* WithSeries(const HostOutcome& host, PhaseResult* whole) {
  if (!host.result) return nullptr;
  if (host.packed_series.empty()) return &*host.result;
  *whole = *host.result;
  // Packed from this very result as it was read: they fit.
  (void)UnpackSeries(host.packed_series, whole);
  return whole;
}

}  // namespace stormark::controller
