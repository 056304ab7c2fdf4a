#include "controller/workloads/command_params.h"

#include "common/strings.h"
#include "common/units.h"

namespace stormark::controller {

using common::Status;
using common::StrCat;

Status SetCommandParameter(std::string_view key, std::string_view value,
                           stormark::v1::CommandSpec* spec) {
  if (key == "command") {
    if (value.find_first_not_of(" \t") == std::string_view::npos) {
      return absl::InvalidArgumentError("bad command '': give a command line");
    }
    spec->clear_argv();
    spec->set_shell(std::string(value));
  } else if (key == "exec") {
    stormark::v1::CommandSpec parsed;
    for (std::string_view word : common::Split(value, ' ')) {
      if (!word.empty()) parsed.add_argv(std::string(word));
    }
    if (parsed.argv_size() == 0) {
      return absl::InvalidArgumentError("bad exec '': give a program and its arguments");
    }
    spec->clear_shell();
    *spec->mutable_argv() = parsed.argv();
  } else if (key == "sync") {
    ASSIGN_OR_RETURN(bool sync, common::ParseBool(key, value));
    spec->set_sync(sync);
  } else if (key == "timeout") {
    auto nanos = common::ParseDurationNanos(value);
    if (!nanos.ok() || *nanos < 1'000'000) {
      return absl::InvalidArgumentError(
          StrCat("bad timeout '", value, "': expected a duration such as 90s or 10m"));
    }
    spec->set_timeout_ms(static_cast<uint64_t>(*nanos / 1'000'000));
  } else {
    return absl::InvalidArgumentError(
        StrCat("unknown command parameter '", key, "' (known: ", kCommandParameterNames, ")"));
  }
  return absl::OkStatus();
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
