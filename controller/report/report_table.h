// The tables `stormark run` prints, and `stormark results show` prints again from the store.
//
// The side-by-side table of one phase: a row per host and target, then "all hosts", then
// the notes that qualify the figures (cache, too fast, failures).
#ifndef STORMARK_CONTROLLER_REPORT_REPORT_TABLE_H_
#define STORMARK_CONTROLLER_REPORT_REPORT_TABLE_H_

#include <string>
#include <vector>

#include "controller/fleet/fleet.h"
#include "controller/run/run_record.h"
#include "controller/report/host_groups.h"
#include "controller/report/summary.h"

namespace stormark::controller {

// A phase's name with its place in the run: "seq-write", "seq-write [bs=4k]" or
// "seq-write [bs=4k, run 2/3]" (the run only when `repeat` is over 1).
std::string PhasePlace(const PhaseOutcome& outcome, int repeat);

// `index` and `count` number the phase within the run ("Phase 1/2"); with `repeat` over
// 1, the header says which repetition this is, and it names the sweep point, if any. Past
// view.collapse_above hosts, and without view.all_hosts, the rows are groups of hosts
// (host_groups.h).
std::string FormatPhaseTable(const PhaseOutcome& outcome, const PhaseSummary& summary, size_t index,
                             size_t count, int repeat = 1, const TableView& view = {});

// The agents of a run: machine, targets and clock offset per host, or UNAVAILABLE.
// Past view.collapse_above agents, and without view.all_hosts, a summary: how many answered,
// their machines and targets grouped, the range of clock offsets.
std::string FormatAgentsTable(const std::vector<AgentRecord>& agents, const TableView& view = {});

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_REPORT_TABLE_H_
