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
  // A setup stops at its first failed line: what follows builds on it. A teardown runs every
  // line: an `umount` of a filesystem a failed setup never mounted must not keep `mdadm --stop`
  // from freeing the disks for the next point.
  bool all_ok = true, last_ok = true;
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
    all_ok = all_ok && ok;
    last_ok = ok;
    if (!ok && !teardown) return false;
  }
  // As `results show` prints them: a blank line after the hooks, unless the last one failed.
  if (!lines.empty() && last_ok) std::fputs("\n", out);
  return all_ok;
}

}  // namespace stormark::controller
