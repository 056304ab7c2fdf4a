#include "controller/results/phase_writer.h"

#include <optional>
#include <string>

#include "common/strings.h"
#include "controller/fleet/packed_series.h"

namespace stormark::controller {

PhaseWriter::PhaseWriter(ResultsStore* store, std::string run_id, size_t phase_index, size_t hosts)
    : store_(store),
      run_id_(std::move(run_id)),
      phase_index_(phase_index),
      added_(hosts, 0),
      written_(hosts, 0),
      thread_([this] { Loop(); }) {}

PhaseWriter::~PhaseWriter() {
  if (thread_.joinable()) {
    std::vector<char> written;
    (void)Finish(&written);
  }
}

bool PhaseWriter::Add(size_t host_index, HostOutcome* host) {
  // Outside the lock: the copy of everything but the result and its packed series, and the
  // result serialized.
  Queued entry;
  entry.host_index = host_index;
  std::optional<stormark::v1::PhaseResult> result = std::move(host->result);
  host->result.reset();
  std::string packed_series;
  packed_series.swap(host->packed_series);
  entry.host = *host;
  host->result = std::move(result);
  entry.has_result = host->result.has_value();
  if (entry.has_result) host->result->SerializeToString(&entry.result);
  absl::MutexLock lock(&mu_);
  if (!error_.ok() || finishing_ || host_index >= added_.size() || added_[host_index]) {
    host->packed_series.swap(packed_series);
    return false;
  }
  added_[host_index] = 1;
  entry.packed_series.swap(packed_series);
  queue_.push_back(std::move(entry));
  return true;
}

common::Status PhaseWriter::Unpack(const Queued& queued, HostOutcome* host) {
  *host = queued.host;
  host->result.reset();
  if (queued.has_result) {
    host->result.emplace();
    if (!host->result->ParseFromString(queued.result) ||
        (!queued.packed_series.empty() && !UnpackSeries(queued.packed_series, &*host->result))) {
      return absl::DataLossError(common::StrCat("the result of host ", host->host,
                                                " could not be parsed back from the queue"));
    }
  }
  return absl::OkStatus();
}

void PhaseWriter::GiveBack(const std::vector<Queued>& queued) {
  for (const Queued& entry : queued) {
    HostOutcome host;
    if (Unpack(entry, &host).ok()) unwritten_.emplace_back(entry.host_index, std::move(host));
  }
}

void PhaseWriter::Loop() {
  while (true) {
    std::vector<Queued> batch;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](PhaseWriter* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) {
            return !w->queue_.empty() || w->finishing_;
          },
          this));
      if (queue_.empty()) return;  // Finishing, and everything is written.
      batch.swap(queue_);
    }
    // One transaction for the batch, one parsed result at a time.
    size_t next = 0;
    const common::Status status = store_->AddHosts(
        run_id_, phase_index_, [&](size_t* h, HostOutcome* host) -> common::StatusOr<bool> {
          if (next == batch.size()) return false;
          const Queued& entry = batch[next++];
          *h = entry.host_index;
          RETURN_IF_ERROR(Unpack(entry, host));
          return true;
        });
    absl::MutexLock lock(&mu_);
    if (!status.ok()) {
      error_ = status;
      GiveBack(batch);
      GiveBack(queue_);
      queue_.clear();
      return;
    }
    for (const Queued& entry : batch) written_[entry.host_index] = 1;
  }
}

common::Status PhaseWriter::Finish(std::vector<char>* written,
                                   std::vector<std::pair<size_t, HostOutcome>>* unwritten) {
  {
    absl::MutexLock lock(&mu_);
    finishing_ = true;
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  *written = written_;
  if (unwritten != nullptr) *unwritten = std::move(unwritten_);
  return error_;
}

}  // namespace stormark::controller
