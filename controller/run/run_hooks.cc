#include "controller/run/run_hooks.h"

#include <algorithm>

#include "common/strings.h"
#include "common/units.h"
#include "fmt/format.h"

namespace stormark::controller {

using common::StrCat;

bool RunHooks(Fleet& fleet, const std::vector<std::string>& lines, const SweepPoint& point,
              const char* what, const std::function<std::string()>& next_id, std::FILE* out,
              bool teardown) {
  bool said_halt = false;
  for (size_t i = 0; i < lines.size() && (teardown || !fleet.halted()); ++i) {
    PhasePlan hook;
    hook.name = StrCat(what, "-", i + 1);
    hook.sweep_point = point;
    stormark::v1::CommandSpec* command = hook.spec.mutable_command();
    command->set_shell(*ExpandHook(lines[i], point));  // Checked with the plan.
    command->set_hook(true);
    if (teardown && fleet.halted()) {
      hook.runs_after_halt = true;
      command->set_timeout_ms(static_cast<uint64_t>(kTeardownAfterHaltNanos / 1'000'000));
      if (!said_halt) {
        std::fprintf(
            out, "  teardown after the %s, so that nothing the setup did stays: at most %s each\n",
            fleet.aborted() ? "interrupt" : "stop",
            common::FormatDurationNanos(static_cast<double>(kTeardownAfterHaltNanos)).c_str());
        said_halt = true;
      }
    }
    // The id says it is a hook ("r...-7-setup-1"), so the agents' logs read as the output.
    const PhaseOutcome outcome =
        fleet.RunPhase(hook, StrCat(next_id(), "-", hook.name), nullptr, RunMode::kConcurrent);
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
