// A plan's sweep (`sweep:` in plan.h): its points, every combination of the axes' values in
// run order, the phases to run at each point, and the hook lines with the point's values.
#ifndef STORMARK_CONTROLLER_PLAN_PLAN_SWEEP_H_
#define STORMARK_CONTROLLER_PLAN_PLAN_SWEEP_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace stormark::controller {

struct Plan;
struct PhasePlan;

// One value of each swept parameter, in the order the sweep names them:
// {{"chunk", "64k"}, {"read_ahead_kb", "4096"}}. Empty outside a sweep.
using SweepPoint = std::vector<std::pair<std::string, std::string>>;

// One swept parameter and its values, in order.
struct SweepAxis {
  std::string name;
  std::vector<std::string> values;
};

// "chunk=64k read_ahead_kb=4096", or "" for no sweep.
std::string DescribeSweepPoint(const SweepPoint& point);

// The sweep's points, in run order (the last axis changes fastest); one empty point when
// there is no sweep.
std::vector<SweepPoint> SweepPoints(const Plan& plan);

// The phases to run at `point` in repetition `repetition`, with the point's values applied.
common::StatusOr<std::vector<PhasePlan>> PhasesAt(const Plan& plan, const SweepPoint& point,
                                                  int repetition);

// A hook line with every {name} replaced by the point's value. INVALID_ARGUMENT names a
// placeholder the sweep does not define.
common::StatusOr<std::string> ExpandHook(std::string_view line, const SweepPoint& point);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_PLAN_PLAN_SWEEP_H_
