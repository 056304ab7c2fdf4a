#include "controller/report/run_status.h"

#include <algorithm>
#include <string_view>

#include "common/units.h"
#include "controller/report/report_table.h"
#include "fmt/format.h"

namespace stormark::controller {

RunStatus StatusOf(const RunRecord& run) {
  std::vector<std::string> reasons;
  for (const AgentRecord& agent : run.agents) {
    if (agent.error.empty()) continue;
    // The client's errors name their host for standalone use; here the line names it first.
    std::string_view why = agent.error;
    const std::string prefix = fmt::format("host {}: ", agent.host);
    if (why.starts_with(prefix)) why.remove_prefix(prefix.size());
    reasons.push_back(fmt::format("{}: {}", agent.host, why));
  }
  int repeat = 1;
  for (const PhaseOutcome& phase : run.phases) repeat = std::max(repeat, phase.plan.repetition + 1);
  // Hooks and phases in the order they ran.
  size_t hook = 0, skipped = 0;
  bool any_succeeded = false;
  auto hooks_before = [&](size_t phase_index) {
    auto skip = [&] {
      reasons.push_back(fmt::format("sweep point {}: its phases were skipped (its setup failed)",
                                    run.skipped_points[skipped++].point));
    };
    for (; hook < run.hooks.size() && run.hooks[hook].before_phase <= phase_index; ++hook) {
      const HookOutcome& h = run.hooks[hook];
      for (const auto& failure : h.failures) {
        reasons.push_back(
            fmt::format("{} `{}` failed on {}: {}", h.what, h.line, failure.first, failure.second));
      }
      // The point a failed setup skipped comes right after it.
      if (!h.ok() && h.what == "setup" && skipped < run.skipped_points.size() &&
          run.skipped_points[skipped].point == h.point) {
        skip();
      }
    }
    while (skipped < run.skipped_points.size() &&
           run.skipped_points[skipped].before_phase <= phase_index) {
      skip();
    }
  };
  for (size_t p = 0; p < run.phases.size(); ++p) {
    hooks_before(p);
    const PhaseOutcome& phase = run.phases[p];
    for (const HostOutcome& host : phase.hosts) {
      if (host.succeeded()) {
        any_succeeded = true;
        continue;
      }
      // An agent that took no part is said once, above.
      const bool absent = std::any_of(run.agents.begin(), run.agents.end(), [&](const auto& a) {
        return a.host == host.host && !a.error.empty();
      });
      if (absent) continue;
      // Where a figure is missing; why is in the phase's table, and its result's error.
      const char* what = !host.result ? "gave no result"
                         : host.result->state() == stormark::v1::PhaseResult::ABORTED ? "aborted"
                                                                                      : "failed";
      reasons.push_back(fmt::format("phase {}: {} {}", PhasePlace(phase, repeat), host.host, what));
    }
  }
  hooks_before(SIZE_MAX);
  if (!run.stopped.empty()) reasons.push_back(run.stopped);

  RunStatus status;
  if (run.interrupted) {
    status.status = "interrupted";
  } else if (!any_succeeded) {
    status.status = "failed";
    if (reasons.empty()) reasons.push_back("no phase ran");
  } else {
    status.status = reasons.empty() ? "complete" : "partial";
  }
  if (reasons.size() > kMaxReasons) {
    const size_t more = reasons.size() - kMaxReasons;
    reasons.resize(kMaxReasons);
    reasons.push_back(fmt::format("... and {} more", more));
  }
  status.reasons = std::move(reasons);
  return status;
}

std::string FormatRunStatus(const RunStatus& status) {
  std::string out = fmt::format("status: {}", status.status);
  if (status.reasons.empty()) return out + "\n";
  out += ":\n";
  for (const std::string& reason : status.reasons) out += fmt::format("  - {}\n", reason);
  return out;
}

std::string FormatHookLine(const HookOutcome& hook) {
  const std::string after =
      hook.after.empty()
          ? ""
          : fmt::format(" after the {} (at most {})", hook.after,
                        common::FormatDurationNanos(static_cast<double>(kTeardownAfterHaltNanos)));
  if (hook.ok()) {
    return fmt::format("  {} `{}`{}: ok on {} host{} (longest {})\n", hook.what, hook.line, after,
                       hook.hosts, hook.hosts == 1 ? "" : "s",
                       common::FormatDurationNanos(static_cast<double>(hook.longest_nanos)));
  }
  std::string out = fmt::format("  {} `{}`{}: FAILED\n", hook.what, hook.line, after);
  for (const auto& [host, why] : hook.failures) out += fmt::format("  x {}: {}\n", host, why);
  return out;
}

std::string FormatSkippedPoint(const SkippedPoint&) {
  return "  the phases of this point are skipped: its setup failed\n\n";
}

}  // namespace stormark::controller
