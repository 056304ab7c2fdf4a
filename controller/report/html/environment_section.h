// The environment notes of the HTML report: what each host and target was (kernel, CPU,
// RAM, filesystem, mount options, device and its queue settings), one column per host or
// target, with the facts that differ between columns highlighted: those are what the
// figures' differences may come from.
//
// Facts are plain (row, key, value) triples, so new kinds of environment capture only add
// triples: the table needs no change. All functions are pure.
#ifndef STORMARK_CONTROLLER_REPORT_HTML_ENVIRONMENT_SECTION_H_
#define STORMARK_CONTROLLER_REPORT_HTML_ENVIRONMENT_SECTION_H_

#include <cstddef>
#include <string>
#include <string_view>
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

// The same facts for more columns than a table can hold side by side (a fleet): a row per key,
// each giving the key's distinct values, most common first, with how many columns have each
// and the first of them by name ("6.1.0-18-amd64: 1998 (db1, db2, db3 and 1995 more)"); a
// column without the key counts as the value "-". A key with more than one value is marked
// class="differs". At most kValuesListed values per key, then how many more.
inline constexpr size_t kValuesListed = 12;
// `noun` names the columns: "hosts", "targets".
std::string GroupedEnvironmentTable(const std::vector<EnvironmentFact>& facts,
                                    std::string_view noun);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_HTML_ENVIRONMENT_SECTION_H_
