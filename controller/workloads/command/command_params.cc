#include "controller/workloads/command/command_params.h"

#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/command/command_spec.h"
#include "controller/workloads/option_table.h"

namespace stormark::controller {

using common::Status;
using common::StrCat;

namespace {

using stormark::v1::CommandSpec;
using stormark::v1::PhaseSpec;

CommandSpec& C(PhaseSpec* spec) { return *spec->mutable_command(); }

// The command workload has no defaults: a phase gives command or exec (CheckCommandSpec).
const std::vector<Option>& Options() {
  static const auto* const options = new std::vector<Option>{
      {.name = "command",
       .type = OptionType::kString,
       .accepts = "a command line",
       .help = "a line for /bin/sh -c, timed from its start to its exit",
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             C(s).clear_argv();
             C(s).set_shell(v.text);
           }},
      {.name = "exec",
       .type = OptionType::kString,
       .accepts = "a program and its arguments",
       .help = "a program and its arguments, split at spaces and run without a shell",
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             C(s).clear_shell();
             C(s).clear_argv();
             for (std::string_view word : common::Split(v.text, ' ')) {
               if (!word.empty()) C(s).add_argv(std::string(word));
             }
           }},
      {.name = "sync",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "syncfs the target inside the timed region, as `time (cmd; sync)`",
       .store = [](const OptionValue& v, PhaseSpec* s) { C(s).set_sync(v.flag); }},
      {.name = "timeout",
       .type = OptionType::kDuration,
       .min = 1'000'000,
       .help = "kill the command's process group after this long (not given: no limit)",
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             C(s).set_timeout_ms(static_cast<uint64_t>(v.integer / 1'000'000));
           }},
  };
  return *options;
}

}  // namespace

const OptionTable& CommandOptions() {
  static const auto* const table = new OptionTable("command", Options());
  return *table;
}

Status SetCommandParameter(std::string_view key, std::string_view value, CommandSpec* spec) {
  PhaseSpec phase;
  phase.mutable_command()->Swap(spec);
  Status status = CommandOptions().Set(key, value, &phase);
  spec->Swap(phase.mutable_command());
  return status;
}

std::string DescribeCommand(const stormark::v1::CommandSpec& spec) {
  std::string line = spec.shell();
  for (const std::string& arg : spec.argv()) line += (line.empty() ? "" : " ") + arg;
  if (line.size() > 60) line = line.substr(0, 57) + "...";
  std::string text = StrCat("command `", line, "`");
  if (spec.sync()) text += ", sync";
  if (spec.timeout_ms() > 0) {
    text += StrCat(", timeout ", common::FormatDurationNanos(spec.timeout_ms() * 1e6));
  }
  return text;
}

}  // namespace stormark::controller
