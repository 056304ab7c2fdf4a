// The command workload's parameters as a plan file or `--set` writes them:
//
//   command: "tar xf /srv/iso/debian.tar && sync"   # a line for /bin/sh -c
//   exec: "tar xf /srv/iso/debian.tar"              # or a program and its arguments, split
//                                                   # at spaces, run without a shell
//   sync: true        # syncfs the target inside the timed region, as `time (cmd; sync)`
//   timeout: 10m      # kill the command's process group after this long (default: none)
#ifndef STORMARK_CONTROLLER_WORKLOADS_COMMAND_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_COMMAND_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

inline constexpr char kCommandParameterNames[] = "command, exec, sync, timeout";

// Sets one parameter. INVALID_ARGUMENT names the parameter, the value and what is accepted.
common::Status SetCommandParameter(std::string_view key, std::string_view value,
                                   stormark::v1::CommandSpec* spec);

// "command `tar xf a.tar`, sync, timeout 10 min".
std::string DescribeCommand(const stormark::v1::CommandSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_COMMAND_PARAMS_H_
