// The environment of the rows a report compares: which transport each row is labelled with,
// the machine description printed under the tables, and the settings that differ between
// rows, so a comparison never silently pits mq-deadline against none.
//
// Facts are the agents' key/value maps under the stable keys of agent/host/environment.h. A row's
// facts are the agent's snapshot taken as its phase was prepared (PhaseResult host_ and
// target_environment), else the agent's facts from the start of the run. All functions are
// pure; the HTML report and any other view reuse DifferingKeys and FormatDiffers.
#ifndef STORMARK_CONTROLLER_REPORT_ENVIRONMENT_H_
#define STORMARK_CONTROLLER_REPORT_ENVIRONMENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/fleet/fleet.h"
#include "controller/run/run_record.h"

namespace stormark::controller {

using Environment = std::map<std::string, std::string>;

// The marker of a row whose settings differ from the first row's, and of the note below.
inline constexpr char kDiffersMark[] = "!";

// A row's facts, host and target keys in one map (they never share a key). `agent` may be
// nullptr; it is only used when the agent sent no snapshot (an older agent, or no result).
Environment RowEnvironment(const HostOutcome& host, const AgentRecord* agent);

// The keys whose values differ between rows that report them, in the order the notes print
// them (settings first, then transport, filesystem, host facts). A key only some rows report
// is not a difference: unknown is not different. "device", "backing_file" and
// "memory_cgroup" are never compared (they name one host's disk, file or cgroup, not a
// setting), nor are the keys in `ignore`
// (the sweep axes, which differ by design).
std::vector<std::string> DifferingKeys(const std::vector<Environment>& rows,
                                       const std::vector<std::string>& ignore = {});

// Whether row `i` is to carry the marker: its value of some differing key differs from the
// first row that reports that key.
bool RowDiffers(size_t i, const std::vector<Environment>& rows,
                const std::vector<std::string>& keys);

// "differs: scheduler (a: mq-deadline, b: none); read_ahead_kb (a: 128, b: 4096)", rows named
// by `names`. With more than four rows, each value lists its rows instead ("read_ahead_kb
// (128: a, b, c; 4096: d)"). "" when `keys` is empty.
// `max_names` caps the rows named per value ("128: a, b, c and 997 more").
std::string FormatDiffers(const std::vector<std::string>& names,
                          const std::vector<Environment>& rows,
                          const std::vector<std::string>& keys, size_t max_names = SIZE_MAX);

// "aoe" -> "AoE", "iscsi" -> "iSCSI", "nbd" -> "NBD", "fc" -> "FC", "usb" -> "USB": a
// transport label as a user writes it, in the spelling the reports use; others unchanged.
std::string CanonicalTransportLabel(std::string_view label);

// Sets each host's `transport` (the plan's `transport` label of its host, which wins, else
// the detected one) and `transport_note` (when the two disagree: a label that names the
// detected label or the start of its detail, "loop" for "local (loop)", agrees) from
// `agents`, matched by host name.
void LabelTransports(const std::vector<AgentRecord>& agents, PhaseOutcome* outcome);

// The machine description of every agent, the notes of the reference posts written
// automatically: one line per host (kernel, CPU, RAM, governor, vm.dirty_*), one per target
// (transport, device and model, queue settings, filesystem and mount options), then what
// differs between the hosts. "" when no agent reported facts.
// `collapsed` (a fleet past the tables' collapse threshold, host_groups.h) leaves out the lines
// per host and target, keeping what differs, with at most three hosts named per value.
std::string FormatEnvironmentNotes(const std::vector<AgentRecord>& agents, bool collapsed = false);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_ENVIRONMENT_H_
