// The environment notes of the HTML report: what each host and target was (kernel, CPU,
// RAM, filesystem, mount options, device and its queue settings), one column per host or
// target, with the facts that differ between columns highlighted: those are what the
// figures' differences may come from.
//
// Facts are plain (row, key, value) triples, so new kinds of environment capture only add
// triples: the table needs no change. All functions are pure.
#ifndef STORMARK_CONTROLLER_REPORT_HTML_ENVIRONMENT_SECTION_H_
#define STORMARK_CONTROLLER_REPORT_HTML_ENVIRONMENT_SECTION_H_

#include <string>
#include <vector>

#include "controller/run/run_record.h"

namespace stormark::controller {

struct EnvironmentFact {
  std::string row;    // what the fact is about: a host, or "host / target"
  std::string key;    // "kernel", "filesystem", "queue/scheduler"
  std::string value;  // as it was recorded
};

// Each agent's machine: hostname, kernel, CPU, RAM, agent version (row: the host).
std::vector<EnvironmentFact> MachineFacts(const RunRecord& run);
// Each agent's targets: kind, path, filesystem, mount options, device, size, transport and
// the device's queue settings (row: "host / target").
std::vector<EnvironmentFact> TargetFacts(const RunRecord& run);

// An HTML table with a column per row of `facts` (in order of first appearance) and a row
// per key; a key whose value is not the same in every column (missing counts as a value)
// is marked class="differs". "" for no facts. Everything is escaped.
std::string EnvironmentTable(const std::vector<EnvironmentFact>& facts);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HTML_ENVIRONMENT_SECTION_H_
