#include "common/workloads/command/command_spec.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

Status CheckCommandSpec(const stormark::v1::CommandSpec& spec) {
  const bool shell = !spec.shell().empty();
  if (shell == (spec.argv_size() > 0)) {
    return absl::InvalidArgumentError(
        "command: give either a shell command line ('command') or a program with its "
        "arguments ('exec'), not both and not neither");
  }
  if (spec.argv_size() > 0 && spec.argv(0).empty()) {
    return absl::InvalidArgumentError("command: the program name is empty");
  }
  if (spec.argv_size() > kMaxCommandArgs) {
    return absl::InvalidArgumentError(
        StrCat("command: ", spec.argv_size(), " arguments (limit ", kMaxCommandArgs, ")"));
  }
  size_t bytes = spec.shell().size();
  for (const std::string& arg : spec.argv()) bytes += arg.size() + 1;
  if (bytes > kMaxCommandBytes) {
    return absl::InvalidArgumentError(
        StrCat("command: ", bytes, " bytes of command line (limit ", kMaxCommandBytes, ")"));
  }
  for (const std::string& arg : spec.argv()) {
    if (arg.find('\0') != std::string::npos) {
      return absl::InvalidArgumentError("command: an argument holds a NUL byte");
    }
  }
  if (spec.shell().find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("command: the command line holds a NUL byte");
  }
  return absl::OkStatus();
}

MemoryEstimate EstimateMemory(const stormark::v1::CommandSpec& spec) {
  MemoryEstimate e{"command", {}};
  uint64_t line = spec.shell().size();
  for (const std::string& arg : spec.argv()) line = SaturatingAdd(line, arg.size() + 1);
  // argv is copied once for execve; stdout and stderr keep a 4 KiB tail each.
  e.parts.push_back({"its command line", SaturatingMul(2, line),
                     StrCat(line, " bytes, copied once"), "the command line"});
  e.parts.push_back({"output tails", 2 * 4096, "4 KiB of stdout and of stderr", "nothing"});
  e.parts.push_back({"its recorder", HistogramBytes(), "one latency histogram", "nothing"});
  return e;
}

}  // namespace stormark::common
