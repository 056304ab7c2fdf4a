// When one host's phase has run far past its expected end, so that the fleet aborts it there
// with the reason, rather than wait for it for ever:
//   - the plan's `deadline:` for the phase, when it gives one;
//   - else a runtime-bound phase (randio runtime) is overdue at 2 x (ramp + runtime) + 60 s;
//   - else a size-bound phase is overdue at 4 x the time its own progress so far says the
//     whole size takes, + 60 s (no estimate before the first progress that moved bytes).
// A phase with neither (a command, bonnie) has no deadline unless the plan gives one.
#ifndef STORMARK_CONTROLLER_PHASE_DEADLINE_H_
#define STORMARK_CONTROLLER_PHASE_DEADLINE_H_

#include <cstdint>
#include <string>

#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

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

 private:
  int64_t fixed_limit_nanos_ = 0;  // From the plan or the runtime; 0: none.
  std::string fixed_why_;
  uint64_t expected_bytes_ = 0;
  // The last progress that moved bytes.
  int64_t advanced_at_nanos_ = 0;
  uint64_t advanced_bytes_ = 0;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_PHASE_DEADLINE_H_
