#include "controller/run/run_hooks.h"

#include <algorithm>

#include "common/strings.h"
#include "common/units.h"
#include "controller/report/run_status.h"
#include "fmt/format.h"

namespace stormark::controller {

using common::StrCat;

bool RunHooks(Fleet& fleet, const std::vector<std::string>& lines, const SweepPoint& point,
              const char* what, const std::function<std::string()>& next_id, std::FILE* out,
              RunRecord* run, bool teardown) {
  for (size_t i = 0; i < lines.size() && (teardown || !fleet.halted()); ++i) {
    PhasePlan plan;
    plan.name = StrCat(what, "-", i + 1);
    plan.sweep_point = point;
    stormark::v1::CommandSpec* command = plan.spec.mutable_command();
    command->set_shell(*ExpandHook(lines[i], point));  // Checked with the plan.
    command->set_hook(true);
    HookOutcome hook;
    hook.before_phase = run->phases.size();
    hook.what = what;
    hook.line = command->shell();
    hook.point = DescribeSweepPoint(point);
    if (teardown && fleet.halted()) {
      plan.runs_after_halt = true;
      command->set_timeout_ms(static_cast<uint64_t>(kTeardownAfterHaltNanos / 1'000'000));
      hook.after = fleet.aborted() ? "interrupt" : "stop";
    }
    // The id says it is a hook ("r...-7-setup-1"), so the agents' logs read as the output.
    const PhaseOutcome outcome =
        fleet.RunPhase(plan, StrCat(next_id(), "-", plan.name), nullptr, RunMode::kConcurrent);
    hook.hosts = outcome.hosts.size();
    for (const HostOutcome& host : outcome.hosts) {
      if (host.succeeded()) {
        hook.longest_nanos = std::max(hook.longest_nanos, host.result->elapsed_nanos());
      } else {
        hook.failures.emplace_back(host.host, host.error.empty() ? "failed" : host.error);
      }
    }
    std::fputs(FormatHookLine(hook).c_str(), out);
    std::fflush(out);
    const bool ok = hook.ok();
    run->hooks.push_back(std::move(hook));
    if (!ok) return false;
  }
  if (!lines.empty()) std::fputs("\n", out);
  return true;
}

}  // namespace stormark::controller
