// The postmark workload's parameters as a plan file or `--set` writes them, each named after
// the PostMark command it mirrors (number: `set number`, size: `set size LOW HIGH` as
// 1000:9000, transactions, subdirectories, read, write, buffering, bias_read, bias_create,
// seed, report), with PostMark's defaults. PostmarkOptions() declares them;
// docs/workloads/postmark-options.md is generated from it.
//
// Sizes take k/M suffixes here (PostMark's own scripts take plain numbers; see
// postmark_config.h). A plan phase can also read a PostMark script with `config: FILE`.
#ifndef STORMARK_CONTROLLER_WORKLOADS_POSTMARK_POSTMARK_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_POSTMARK_POSTMARK_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "controller/workloads/option_table.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// The postmark options, PostMark's defaults and help.
const OptionTable& PostmarkOptions();

// Sets one parameter through PostmarkOptions(). INVALID_ARGUMENT names the parameter, the
// value and what is accepted; `spec` is unchanged then.
// `config` is refused here: it names a file, which only a plan (relative to the plan) or
// --postmark-config can resolve.
common::Status SetPostmarkParameter(std::string_view key, std::string_view value,
                                    stormark::v1::PostmarkSpec* spec);

// "postmark 2000 files of 1000-9000 B, 50000 transactions, 10 subdirectories" plus whatever
// differs from PostMark's defaults (block sizes, buffering, biases, seed).
std::string DescribePostmark(const stormark::v1::PostmarkSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_POSTMARK_POSTMARK_PARAMS_H_
