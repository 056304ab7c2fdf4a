// The command workload's parameters as a plan file or `--set` writes them (CommandOptions()
// declares them; docs/workloads/command-options.md is generated from it):
//
//   command: "tar xf /srv/iso/debian.tar && sync"   # a line for /bin/sh -c
//   exec: "tar xf /srv/iso/debian.tar"              # or a program and its arguments, split
//                                                   # at spaces, run without a shell
//   sync: true        # syncfs the target inside the timed region, as `time (cmd; sync)`
//   timeout: 10m      # kill the command's process group after this long (default: none)
#ifndef STORMARK_CONTROLLER_WORKLOADS_COMMAND_COMMAND_PARAMS_H_
#define STORMARK_CONTROLLER_WORKLOADS_COMMAND_COMMAND_PARAMS_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "controller/workloads/option_table.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// The command options and their help.
const OptionTable& CommandOptions();

// Sets one parameter through CommandOptions(). INVALID_ARGUMENT names the parameter, the value
// and what is accepted; `spec` is unchanged then.
common::Status SetCommandParameter(std::string_view key, std::string_view value,
                                   stormark::v1::CommandSpec* spec);

// "command `tar xf a.tar`, sync, timeout 10 min".
std::string DescribeCommand(const stormark::v1::CommandSpec& spec);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_COMMAND_COMMAND_PARAMS_H_
