// Which controller process writes a run, so that a reader can tell a run that is still going
// from one that a crashed (or SIGKILLed) controller left marked "running".
#ifndef STORMARK_CONTROLLER_RESULTS_RUN_OWNER_H_
#define STORMARK_CONTROLLER_RESULTS_RUN_OWNER_H_

#include <cstdint>
#include <string>

namespace stormark::controller {

struct RunOwner {
  // The machine (uname nodename), the process id, and the process's start time in clock
  // ticks since boot (/proc/PID/stat field 22), which tells a recycled pid from the original.
  std::string host;
  int64_t pid = 0;
  int64_t start_ticks = 0;

  // This process.
  static RunOwner Self();

  // True when this very process still runs. On another machine there is no way to know, so
  // the answer is true there: such a run is shown as running, never called dead on a guess.
  bool Alive() const;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_RUN_OWNER_H_
