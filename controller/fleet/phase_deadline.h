// When one host's phase has run far past its expected end, so that the fleet aborts it there
// with the reason, rather than wait for it for ever:
//   - the plan's `deadline:` for the phase, when it gives one;
//   - else a runtime-bound phase (randio runtime) is overdue at 2 x (ramp + runtime) + 60 s;
//   - else a size-bound phase is overdue at 4 x the time its own progress so far says the
//     whole size takes, + 60 s (no estimate before the first progress that moved bytes).
// A phase with neither (a command, bonnie) has no deadline unless the plan gives one.
//
// Prepare, the untimed set-up before the start barrier (laying out a file, creating a file
// set), has a deadline of its own: PrepareDeadline.
#ifndef STORMARK_CONTROLLER_FLEET_PHASE_DEADLINE_H_
#define STORMARK_CONTROLLER_FLEET_PHASE_DEADLINE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// How long one host's Prepare of a phase may take before the fleet aborts it there and fails
// the host: the plan's `prepare_deadline:` (or --prepare-deadline) when it gives one, else a
// generous 5 min + 1 s per 16 MiB of the phase's size (the file a stream or randio phase
// lays out, also for a time-based randio), so that a set-up stuck in the kernel (a write to a
// frozen or dead filesystem) ends instead of holding the barrier for ever, while a slow disk
// laying out a large file is not cut short.
struct PrepareDeadline {
  // `plan_deadline_nanos` is the plan's `prepare_deadline:` (0: none).
  PrepareDeadline(const stormark::v1::PhaseSpec& spec, int64_t plan_deadline_nanos);

  int64_t limit_nanos = 0;
  // Where the limit comes from: "its prepare_deadline", "the default: 5 min + 1 s per 16 MiB".
  std::string why;
};

class PhaseDeadline {
 public:
  // `plan_deadline_nanos` is the plan's `deadline:` (0: none); `expected_bytes` what the
  // phase moves on one host when it is size-bound (0: unknown).
  PhaseDeadline(const stormark::v1::PhaseSpec& spec, int64_t plan_deadline_nanos,
                uint64_t expected_bytes);

  // Progress from the agent: time since its start and bytes so far.
  void Progress(int64_t elapsed_nanos, uint64_t bytes);

  // Why the phase is overdue `elapsed_nanos` after its start ("ran 75.0 s, past its
  // deadline of 60.0 s (plan `deadline:`)"), or "" when it is not.
  std::string Overdue(int64_t elapsed_nanos) const;
  // How long after its start the phase becomes overdue, as far as is known now (a size-bound
  // phase's limit moves with its progress), or nullopt when it has no limit yet. Overdue(t) is
  // empty for every t up to it.
  std::optional<int64_t> LimitNanos() const;

 private:
  // A size-bound phase's limit and its expected length, from its progress so far.
  std::optional<double> SizeLimitNanos() const;
  double ExpectedNanos() const;

  int64_t fixed_limit_nanos_ = 0;  // From the plan or the runtime; 0: none.
  std::string fixed_why_;
  uint64_t expected_bytes_ = 0;
  // The last progress that moved bytes.
  int64_t advanced_at_nanos_ = 0;
  uint64_t advanced_bytes_ = 0;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_PHASE_DEADLINE_H_
