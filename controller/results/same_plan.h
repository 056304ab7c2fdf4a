// `--baseline latest-same-plan`: the run a CI job's new run is to be judged against.
#ifndef STORMARK_CONTROLLER_RESULTS_SAME_PLAN_H_
#define STORMARK_CONTROLLER_RESULTS_SAME_PLAN_H_

#include <string>

#include "common/status.h"
#include "controller/results/results_store.h"

namespace stormark::controller {

// The newest completed run that started before `run_id` with the same label, the same hosts
// and the same plan: the same phases in the same order, each with the same name, sweep point,
// repetition and workload (the PhaseSpec as recorded, compared field by field). NOT_FOUND,
// saying what was looked for and why the earlier runs did not match, when there is none.
common::StatusOr<std::string> LatestSamePlanRun(const ResultsStore& store,
                                                const std::string& run_id);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_SAME_PLAN_H_
