// The stream workload's parameters as a plan file or `--set` writes them:
//
//   rw: write | read     size: 1G     bs: 1M     direct: true     fdatasync: true
#ifndef STORMARK_CONTROLLER_WORKLOADS_STREAM_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_STREAM_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// Sets one parameter from its text form. INVALID_ARGUMENT names the parameter and the value.
common::Status SetStreamParameter(std::string_view key, std::string_view value,
                                  stormark::v1::StreamSpec* spec);

// "stream write 1 GiB, bs 1 MiB, fdatasync".
std::string DescribeStream(const stormark::v1::StreamSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_STREAM_PARAMS_H_
