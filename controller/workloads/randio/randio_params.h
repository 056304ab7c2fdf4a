// The randio workload's parameters, named as fio names its options so that a fio job file
// translates line by line (rw, bs, iodepth, numjobs, ioengine, rwmixread, randseed, ...).
// RandioOptions() declares each with its aliases, default and help; `stormark help workload
// randio` prints them and docs/workloads/randio-options.md is generated from them.
#ifndef STORMARK_CONTROLLER_WORKLOADS_RANDIO_RANDIO_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_RANDIO_RANDIO_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "controller/workloads/option_table.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// The randio options (fio's names and aliases), their defaults (rw=randread and bs=4k, as
// fio's, and a 60 s runtime cap) and help. `stormark help workload randio` prints them.
const OptionTable& RandioOptions();

// Sets one parameter through RandioOptions(). INVALID_ARGUMENT names the parameter, the value
// and what is accepted; `spec` is unchanged then.
common::Status SetRandioParameter(std::string_view key, std::string_view value,
                                  stormark::v1::RandioSpec* spec);

// "randio randread bs 4 KiB, iodepth 32, io_uring, direct, 60 s time_based" (defaults left out).
std::string DescribeRandio(const stormark::v1::RandioSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_RANDIO_RANDIO_PARAMS_H_
