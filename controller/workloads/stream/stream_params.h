// The stream workload's parameters as a plan file or `--set` writes them (rw, size, bs,
// direct, fdatasync): StreamOptions() declares them; docs/workloads/stream-options.md is
// generated from it.
#ifndef STORMARK_CONTROLLER_WORKLOADS_STREAM_STREAM_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_STREAM_STREAM_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "controller/workloads/option_table.h"
#include "nlohmann/json_fwd.hpp"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// The stream options, their defaults (write 1 GiB in 1 MiB blocks) and help.
const OptionTable& StreamOptions();

// Sets one parameter through StreamOptions(). INVALID_ARGUMENT names the parameter and the
// value; `spec` is unchanged then.
common::Status SetStreamParameter(std::string_view key, std::string_view value,
                                  stormark::v1::StreamSpec* spec);

// "stream write 1 GiB, bs 1 MiB, fdatasync".
std::string DescribeStream(const stormark::v1::StreamSpec& spec);

// The "workload" object of a stream phase in the JSON report (report_json.h), without its
// "type": rw ("read" or "write"), size_bytes, block_size, direct and fdatasync.
nlohmann::json StreamSpecJson(const stormark::v1::StreamSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_STREAM_STREAM_PARAMS_H_
