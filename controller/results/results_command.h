// `stormark results list | show RUN | compare RUN_A RUN_B`: the results history, read back
// from the store that `stormark run` writes. RUN is a run id, a unique prefix of one, or
// "latest". Bad input (no database, unknown or ambiguous run) is one "stormark: ..." line on
// `err` and exit code 2.
#ifndef STORMARK_CONTROLLER_RESULTS_RESULTS_COMMAND_H_
#define STORMARK_CONTROLLER_RESULTS_RESULTS_COMMAND_H_

#include <cstdio>
#include <string>

namespace stormark::controller {

struct ResultsOptions {
  // --db PATH; empty means DefaultResultsPath().
  std::string db_path;
  // show: --baseline HOST, also print the comparison with that host.
  std::string baseline;
};

int ResultsList(const ResultsOptions& options, std::FILE* out, std::FILE* err);
int ResultsShow(const ResultsOptions& options, const std::string& run, std::FILE* out,
                std::FILE* err);
int ResultsCompare(const ResultsOptions& options, const std::string& run_a,
                   const std::string& run_b, std::FILE* out, std::FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_RESULTS_RESULTS_COMMAND_H_
