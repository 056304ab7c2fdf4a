// The postmark workload's parameters as a plan file or `--set` writes them, each named after
// the PostMark command it mirrors (defaults are PostMark's):
//
//   number: 2000           set number 2000            (500)
//   size: 1000:9000        set size 1000 9000         (500:10000; one value: fixed size)
//   transactions: 50000    set transactions 50000     (500)
//   subdirectories: 10     set subdirectories 10      (0: none)
//   read: 512, write: 4k   set read 512, set write 4096   (512 bytes each)
//   buffering: false       set buffering false        (true: C stdio; false: one system
//                                                      call per block, still page-cached)
//   bias_read: 5           set bias read 5            (0-10, or -1 to disable)
//   bias_create: 5         set bias create 5          (0-10, or -1 to disable)
//   seed: 42               set seed 42                (42)
//   report: terse          set report terse           (verbose)
//
// Sizes take k/M suffixes here (PostMark's own scripts take plain numbers; see
// postmark_config.h). A plan phase can also read a PostMark script with `config: FILE`.
#ifndef STORMARK_CONTROLLER_WORKLOADS_POSTMARK_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_POSTMARK_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

inline constexpr char kPostmarkParameterNames[] =
    "config, number, size, transactions, subdirectories, read, write, buffering, bias_read, "
    "bias_create, seed, report";

// Sets one parameter. INVALID_ARGUMENT names the parameter, the value and what is accepted.
// `config` is refused here: it names a file, which only a plan (relative to the plan) or
// --postmark-config can resolve.
common::Status SetPostmarkParameter(std::string_view key, std::string_view value,
                                    stormark::v1::PostmarkSpec* spec);

// "postmark 2000 files of 1000-9000 B, 50000 transactions, 10 subdirectories" plus whatever
// differs from PostMark's defaults (block sizes, buffering, biases, seed).
std::string DescribePostmark(const stormark::v1::PostmarkSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_POSTMARK_PARAMS_H_
