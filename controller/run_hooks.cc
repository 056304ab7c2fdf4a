#include "controller/run_hooks.h"

#include <algorithm>

#include "common/strings.h"
#include "common/units.h"
#include "fmt/format.h"

namespace stormark::controller {

using common::StrCat;

bool RunHooks(Fleet& fleet, const std::vector<std::string>& lines, const SweepPoint& point,
              const char* what, const std::function<std::string()>& next_id, std::FILE* out) {
  for (size_t i = 0; i < lines.size() && !fleet.halted(); ++i) {
    PhasePlan hook;
    hook.name = StrCat(what, "-", i + 1);
    hook.sweep_point = point;
    stormark::v1::CommandSpec* command = hook.spec.mutable_command();
    command->set_shell(*ExpandHook(lines[i], point));  // Checked with the plan.
    command->set_hook(true);
    const PhaseOutcome outcome = fleet.RunPhase(hook, next_id(), nullptr, RunMode::kConcurrent);
    int64_t longest = 0;
    std::string failures;
    for (const HostOutcome& host : outcome.hosts) {
      if (host.succeeded()) {
        longest = std::max(longest, host.result->elapsed_nanos());
      } else {
        failures +=
            fmt::format("  x {}: {}\n", host.host, host.error.empty() ? "failed" : host.error);
      }
    }
    std::fprintf(out, "  %s `%s`: %s\n%s", what, command->shell().c_str(),
                 failures.empty()
                     ? fmt::format("ok on {} host{} (longest {})", outcome.hosts.size(),
                                   outcome.hosts.size() == 1 ? "" : "s",
                                   common::FormatDurationNanos(static_cast<double>(longest)))
                           .c_str()
                     : "FAILED",
                 failures.c_str());
    std::fflush(out);
    if (!failures.empty()) return false;
  }
  if (!lines.empty()) std::fputs("\n", out);
  return true;
}

}  // namespace stormark::controller
