// The trim workload's parameters as a plan file or `--set` writes them (size, bs, offset,
// random, seed; fio's names): TrimOptions() declares them; docs/workloads/trim-options.md is
// generated from it.
#ifndef STORMARK_CONTROLLER_WORKLOADS_TRIM_TRIM_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_TRIM_TRIM_PARAMS_H_

#include <string>

#include "controller/workloads/option_table.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// The trim options, their defaults (the whole target in 1 MiB requests, in address order) and
// help.
const OptionTable& TrimOptions();

// "trim 1 GiB from 0, bs 1 MiB, random".
std::string DescribeTrim(const stormark::v1::TrimSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_TRIM_TRIM_PARAMS_H_
