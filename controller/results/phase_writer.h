// Writes one phase's host rows into the results store as their results arrive, on a thread of
// its own and in batches (every row that came while the last batch was written goes in the next
// transaction): a controller that dies during a long phase leaves the results that had
// arrived, and the phase's end writes only the rows still missing and the clocks.
//
// Results wait for the writer serialized: a result parsed takes about five times its wire size,
// and when a fleet's results come at once the writer is seconds behind (a series row a second
// of each host's phase to write), so the queue, not what the run keeps, set the controller's
// peak memory. The writer parses each one as it writes it.
//
// Add is thread-safe (it is called from gRPC's threads); the store is used only by the
// writer's thread between the constructor and Finish, and by nobody else meanwhile.
#ifndef STORMARK_CONTROLLER_RESULTS_PHASE_WRITER_H_
#define STORMARK_CONTROLLER_RESULTS_PHASE_WRITER_H_

#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/status.h"
#include "controller/results/results_store.h"

namespace stormark::controller {

class PhaseWriter {
 public:
  // `store` must outlive the writer; the phase's row must be in it (ResultsStore::BeginPhase).
  PhaseWriter(ResultsStore* store, std::string run_id, size_t phase_index, size_t hosts);
  // Finishes, when Finish was not called.
  ~PhaseWriter();
  PhaseWriter(const PhaseWriter&) = delete;
  PhaseWriter& operator=(const PhaseWriter&) = delete;

  // Host `host_index`'s final outcome (its clock is written at the end): copied, its result
  // serialized, and written soon after. Quick. Returns false when it drops it: a second outcome
  // of one host, an index out of range, or any after a failed write or Finish. One it took is
  // either written or given back by Finish (whole: its series packed by the fleet put back).
  // *host is as it was on return but for its packed series (HostOutcome::packed_series), which
  // an outcome taken gives up; during the call its result is moved aside, so that only the
  // rest of it is copied.
  bool Add(size_t host_index, HostOutcome* host) ABSL_LOCKS_EXCLUDED(mu_);

  // Writes what is queued, stops the thread, and returns the first write error. `written`
  // gets a 1 for each host whose row is in the store; `unwritten` (when given) the outcomes
  // taken and not written, because a write failed.
  common::Status Finish(std::vector<char>* written,
                        std::vector<std::pair<size_t, HostOutcome>>* unwritten = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // A host's outcome as it waits: all but its result, and the result serialized.
  struct Queued {
    size_t host_index = 0;
    HostOutcome host;
    bool has_result = false;
    std::string result;
    std::string packed_series;
  };
  // `queued` whole again. DATA_LOSS when its result does not parse.
  static common::Status Unpack(const Queued& queued, HostOutcome* host);

  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // Hands the outcomes not written back, whole, for Finish.
  void GiveBack(const std::vector<Queued>& queued) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ResultsStore* const store_;
  const std::string run_id_;
  const size_t phase_index_;
  absl::Mutex mu_;
  std::vector<Queued> queue_ ABSL_GUARDED_BY(mu_);
  // Taken, and not written because a write failed: for Finish to give back.
  std::vector<std::pair<size_t, HostOutcome>> unwritten_ ABSL_GUARDED_BY(mu_);
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;
  common::Status error_ ABSL_GUARDED_BY(mu_);
  std::vector<char> added_ ABSL_GUARDED_BY(mu_);  // Each host is written once.
  std::vector<char> written_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // Last: it starts once everything above exists.
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_PHASE_WRITER_H_
