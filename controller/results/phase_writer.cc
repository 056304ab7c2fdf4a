#include "controller/results/phase_writer.h"

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

bool PhaseWriter::Add(size_t host_index, const HostOutcome& host) {
  std::pair<size_t, HostOutcome> entry(host_index, host);  // The copy, outside the lock.
  absl::MutexLock lock(&mu_);
  if (!error_.ok() || finishing_ || host_index >= added_.size() || added_[host_index]) {
    return false;
  }
  added_[host_index] = 1;
  queue_.push_back(std::move(entry));
  return true;
}

void PhaseWriter::Loop() {
  while (true) {
    std::vector<std::pair<size_t, HostOutcome>> batch;
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
    const common::Status status = store_->AddHosts(run_id_, phase_index_, batch);
    absl::MutexLock lock(&mu_);
    if (!status.ok()) {
      error_ = status;
      unwritten_ = std::move(batch);
      for (auto& entry : queue_) unwritten_.push_back(std::move(entry));
      queue_.clear();
      return;
    }
    for (const auto& [h, host] : batch) written_[h] = 1;
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
