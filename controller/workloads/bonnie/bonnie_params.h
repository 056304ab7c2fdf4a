// The bonnie workload's parameters as a plan file or `--set` writes them, each mapped to the
// bonnie++ flag it mirrors (size: -s, ram: -r, chunk, char_size, fast: -f, io, direct: -D,
// sync: -b, files: -n, seeks, seekers, seed: -z). BonnieOptions() declares them;
// docs/workloads/bonnie-options.md is generated from it.
#ifndef STORMARK_CONTROLLER_WORKLOADS_BONNIE_BONNIE_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_BONNIE_BONNIE_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "controller/workloads/option_table.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// The bonnie options, with bonnie++'s flags in their help.
const OptionTable& BonnieOptions();

// "bonnie 4 GiB, chunk 8 KiB, files 16:10000:10000:10, direct" (defaults left out).
std::string DescribeBonnie(const stormark::v1::BonnieSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_BONNIE_BONNIE_PARAMS_H_
