// One status line, redrawn in place while a phase runs, when stdout is a terminal.
//
// Update() is thread-safe: every host's Run thread reports into it.
#ifndef STORMARK_CONTROLLER_RUN_LIVE_PROGRESS_H_
#define STORMARK_CONTROLLER_RUN_LIVE_PROGRESS_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/clock.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

class LiveProgress {
 public:
  // Draws on `out` only when `enabled`. `hosts` is the number of hosts in the fleet.
  LiveProgress(std::FILE* out, bool enabled, size_t hosts, const common::Clock& clock);

  // A phase starts: `label` names it; `expected_bytes` is the total over all hosts (0 if
  // unknown).
  void Begin(const std::string& label, uint64_t expected_bytes);
  void Update(size_t host, const stormark::v1::RunUpdate::Progress& progress);
  // Erases the line.
  void End();

 private:
  void DrawLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::FILE* const out_;
  const bool enabled_;
  const common::Clock& clock_;
  absl::Mutex mu_;
  std::string label_ ABSL_GUARDED_BY(mu_);
  uint64_t expected_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<stormark::v1::RunUpdate::Progress> latest_ ABSL_GUARDED_BY(mu_);
  int64_t last_draw_ ABSL_GUARDED_BY(mu_) = 0;
  bool drawn_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_LIVE_PROGRESS_H_
