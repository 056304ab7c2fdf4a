// What a lying simulated agent says instead of the truth: one figure of its results or its
// progress that no run can produce, for attacks on the controller through its whole path (the
// run's table, exit status, JSON report and results file; tests/integration/implausible_test.py).
// Honest agents of the same process go on as they are.
#ifndef STORMARK_BENCH_FLEET_SIM_LIES_H_
#define STORMARK_BENCH_FLEET_SIM_LIES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stormark/v1/agent.pb.h"

namespace stormark::fleet_sim {

enum class Lie {
  kNone,
  kElapsed,          // The result's elapsed_nanos is 2^63 - 1.
  kStart,            // The result's start_unix_nanos is -2^63.
  kSeriesOffset,     // The result's first series sample starts at 2^63 - 6 ns.
  kBytes,            // The result's bytes are 2^64 - 1.
  kProgressElapsed,  // Each progress's elapsed_nanos is 2^63 - 1.
};

// "elapsed", "start", "series-offset", "bytes", "progress-elapsed"; nullopt for another word.
std::optional<Lie> ParseLie(std::string_view word);
std::vector<std::string> LieWords();

// Changes `result` or `progress` as `lie` says; the other lies leave it alone.
void Tell(Lie lie, stormark::v1::PhaseResult* result);
void Tell(Lie lie, stormark::v1::RunUpdate::Progress* progress);

}  // namespace stormark::fleet_sim

#endif  // STORMARK_BENCH_FLEET_SIM_LIES_H_
