// The bonnie workload's parameters as a plan file or `--set` writes them, mapped to
// bonnie++'s flags:
//
//   size: 4G         -s 4G        (default 2 x RAM)      ram: 2G         -r 2048
//   chunk: 8k        -s 4G:8k     (block size)           char_size: 20M  -f 20M
//   fast: true       -f           (skip per-char tests)  direct: true    -D
//   sync: true       -b           (fsync every write)    seed: 42        -z 42
//   files: 16:10000:10000:10      -n 16:10000:10000:10   (0 skips the file tests)
//   seeks: 8192, seekers: 5       bonnie++'s fixed seek count and seeker processes
//   io: false        -s 0         (skip the I/O tests)
#ifndef STORMARK_CONTROLLER_WORKLOADS_BONNIE_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_BONNIE_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

inline constexpr char kBonnieParameterNames[] =
    "size, ram, chunk, char_size, fast, io, direct, sync, files, seeks, seekers, seed";

// Sets one parameter. INVALID_ARGUMENT names the parameter, the value and what is accepted.
common::Status SetBonnieParameter(std::string_view key, std::string_view value,
                                  stormark::v1::BonnieSpec* spec);

// "bonnie 4 GiB, chunk 8 KiB, files 16:10000:10000:10, direct" (defaults left out).
std::string DescribeBonnie(const stormark::v1::BonnieSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_BONNIE_PARAMS_H_
