// `stormark results list | show RUN | compare RUN_A RUN_B | compare --baseline RUN [RUN]`:
// the results history, read back from the store that `stormark run` writes. RUN is a run id,
// a unique prefix of one, or "latest". Bad input (no database, unknown or ambiguous run) is
// one "stormark: ..." line on `err` and exit code 2.
//
// compare with --fail-if-slower is the CI gate (report_gate.h): exit code 0 when it passes,
// 1 when a figure regressed, 2 on bad input.
#ifndef STORMARK_CONTROLLER_RESULTS_RESULTS_COMMAND_H_
#define STORMARK_CONTROLLER_RESULTS_RESULTS_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace stormark::controller {

struct ResultsOptions {
  // --db PATH; empty means DefaultResultsPath().
  std::string db_path;
  // show: --baseline HOST, also print the comparison with that host.
  std::string baseline;
  // show: --all-hosts and --group-by, as for run (host_groups.h).
  bool all_hosts = false;
  std::string group_by;
};

struct CompareOptions {
  // --baseline RUN (or "latest-same-plan"): the runs given are then the candidate alone
  // (default "latest"). Empty: the runs given are A and B.
  std::string baseline;
  // --fail-if-slower PCT; empty: no gate.
  std::string fail_if_slower;
  // --metric NAME, repeatable: the metrics gated (default kDefaultGateMetrics).
  std::vector<std::string> metrics;
  // --junit FILE, --markdown FILE: the gate's outcome for CI systems and pull requests.
  std::string junit;
  std::string markdown;
  // --all-hosts: every host's row and every failed check, however many hosts.
  bool all_hosts = false;
};

int ResultsList(const ResultsOptions& options, std::FILE* out, std::FILE* err);
int ResultsShow(const ResultsOptions& options, const std::string& run, std::FILE* out,
                std::FILE* err);
int ResultsCompare(const ResultsOptions& options, const CompareOptions& compare,
                   const std::vector<std::string>& runs, std::FILE* out, std::FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_RESULTS_COMMAND_H_
