// The validity verdict of a phase that ran on several hosts at once.
//
// The all-hosts figure of a concurrent phase is the bytes of every host over first start to
// last end. It reads as the fleet's throughput only if the hosts really ran together, and
// that is a question of clocks: each host timed itself, and the controller places the hosts'
// regions side by side through its clock estimates. The verdict answers it from each host's
// start and end on the controller's clock and the estimates' uncertainty:
//
//   - INVALID when the start spread plus the clock uncertainty exceeds `start_spread_limit`
//     (a share of the shortest host's timed region; 1% unless the plan says otherwise);
//   - INVALID when a host started after another had finished: there was no moment when all
//     of them ran;
//   - INVALID when the clock uncertainty alone exceeds that share: the clocks are too poor
//     to say whether the hosts started together;
//   - INVALID, in any mode and with any number of hosts, for a phase read back from the
//     results database before it had ended (PhaseOutcome::ended): its aggregate is that of the
//     hosts that happened to have reported.
//
// It also gives the window in which every host was running (IOR's stonewall): from the last
// start to the first end, and what all hosts did within it, from each host's interval series
// (or, for a host whose series left memory once stored, from its share measured by ShareWindow).
// Phases run one host after another, and phases with fewer than two hosts that succeeded, are
// not judged: they have no aggregate that could be wrong in this way.
//
// Pure functions of a PhaseOutcome, so the live tables, the JSON, `results show`, the HTML
// report and the gate all judge a stored run alike.
#ifndef STORMARK_CONTROLLER_REPORT_VALIDITY_H_
#define STORMARK_CONTROLLER_REPORT_VALIDITY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "controller/fleet/fleet.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

struct PhaseValidity {
  enum class Verdict { kNotJudged, kValid, kInvalid };
  Verdict verdict = Verdict::kNotJudged;
  // One line: why the aggregate is INVALID ("db2 started 4.01 s after db1 had finished"), or
  // why the phase is not judged ("one host"). Empty when valid.
  std::string why;

  // The hosts judged: those that succeeded and have a start.
  int hosts = 0;
  double limit = 0;  // PhasePlan::start_spread_limit
  // On the controller's clock, ns since the epoch.
  int64_t first_start = 0, last_start = 0, first_end = 0, last_end = 0;
  // last_start - first_start, and how far the clocks may move it (the two largest host
  // uncertainties: a pair of hosts can each be off by its own the opposite way).
  int64_t spread_nanos = 0, uncertainty_nanos = 0;
  // The shortest host's timed region: the share is taken of it.
  int64_t shortest_nanos = 0;

  // Every host running: [last_start, first_end]. 0 when there is no such moment.
  int64_t window_nanos = 0;
  // What all hosts did within the window. Estimated pro rata from a host's totals when it sent
  // no interval series that accounts for all of its work.
  uint64_t window_bytes = 0, window_ops = 0;
  bool window_estimated = false;
  // The verdict is INVALID because the clocks are too poor to say: the window is unknown too,
  // and is not shown.
  bool clock_too_poor = false;

  bool judged() const { return verdict != Verdict::kNotJudged; }
  bool invalid() const { return verdict == Verdict::kInvalid; }
  // The spread plus the uncertainty, as a share of the shortest region.
  double share() const;
};

PhaseValidity JudgeValidity(const PhaseOutcome& outcome);

// Passes one stored interval sample of the host at index `host` of a phase.
using SeriesSampleFn = std::function<void(size_t host, const stormark::v1::IntervalSample&)>;

// For the hosts of `outcome` whose interval series left memory (none in the result, none
// packed: dropped once stored, or read for this and dropped), measures what each did within the
// window in which all hosts ran from the series `read_series` passes, every stored sample of the
// phase in any order, and keeps it on the host (window_share): JudgeValidity then gives the same
// window figures as from the series in memory. A host whose stored series does not account for all
// its work gets no share: its part is estimated pro rata, as in memory. DATA_LOSS, and no host gets
// a share, when the samples stored of a host are not as many as its result had
// (HostOutcome::own_series_samples). Memory stays one running sum per
// host, however long the phase.
common::Status ShareWindow(PhaseOutcome* outcome,
                           const std::function<common::Status(const SeriesSampleFn&)>& read_series);

// "valid", "INVALID" or "not judged".
std::string_view VerdictName(PhaseValidity::Verdict verdict);

// The lines the phase tables print under the phase header (each starting with two spaces and
// ending in a newline); "" for a phase not judged. For example:
//   validity: valid: start spread 0.41 ms +-0.08 ms, 0.04% of the shortest host's 1.00 s
//     (limit 1%); all 2 hosts ran together for 0.99 s: 812.4 MiB/s, 203.1k ops/s
//   validity: INVALID: db2 started 4.01 s after db1 had finished
std::string ValidityLines(const PhaseValidity& validity);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_VALIDITY_H_
