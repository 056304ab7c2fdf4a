// The setup and teardown hooks of a plan (`setup:` and `teardown:` in plan.h): shell lines
// run as command phases on every agent, before and after each sweep point.
#ifndef STORMARK_CONTROLLER_RUN_RUN_HOOKS_H_
#define STORMARK_CONTROLLER_RUN_RUN_HOOKS_H_

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "controller/fleet/fleet.h"
#include "controller/plan/plan_sweep.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

// Runs each hook line on every usable host at once, in order, stopping at the first line
// that fails anywhere; a teardown runs every line, even past a failed one. Prints one line per
// hook. Returns whether all succeeded.
// `point`'s values replace {name} in the lines, which must expand (the plan's checks made
// sure); `what` ("setup" or "teardown") names the hooks' phases with their 1-based position,
// and `next_id` gives each its phase id. Setup hooks stop early, successfully, when the fleet
// halts. Teardown hooks (`teardown`) run after an interrupt or --fail-fast too, for what the
// setup mounted must not stay over the target: each then for at most
// kTeardownAfterHaltNanos (report/run_status.h), said in its line; a second interrupt still
// aborts it. Each line's outcome is added to `run`'s hooks.
bool RunHooks(Fleet& fleet, const std::vector<std::string>& lines, const SweepPoint& point,
              const char* what, const std::function<std::string()>& next_id, std::FILE* out,
              RunRecord* run, bool teardown = false);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RUN_RUN_HOOKS_H_
