// The setup and teardown hooks of a plan (`setup:` and `teardown:` in plan.h): shell lines
// run as command phases on every agent, before and after each sweep point.
#ifndef STORMARK_CONTROLLER_RUN_HOOKS_H_
#define STORMARK_CONTROLLER_RUN_HOOKS_H_

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "controller/fleet.h"
#include "controller/plan_sweep.h"

namespace stormark::controller {

// Runs each hook line on every usable host at once, in order, stopping at the first line
// that fails anywhere. Prints one line per hook. Returns whether all succeeded.
// `point`'s values replace {name} in the lines, which must expand (the plan's checks made
// sure); `what` ("setup" or "teardown") names the hooks' phases with their 1-based position,
// and `next_id` gives each its phase id. Stops early, successfully, when the fleet halts.
bool RunHooks(Fleet& fleet, const std::vector<std::string>& lines, const SweepPoint& point,
              const char* what, const std::function<std::string()>& next_id, std::FILE* out);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_HOOKS_H_
