#include "controller/plan/plan_sweep.h"

#include <algorithm>

#include "common/strings.h"
#include "controller/plan/plan.h"

namespace stormark::controller {

using common::Status;
using common::StatusOr;
using common::StrCat;

std::string DescribeSweepPoint(const SweepPoint& point) {
  std::string text;
  for (const auto& [key, value] : point) text += StrCat(text.empty() ? "" : " ", key, "=", value);
  return text;
}

std::vector<SweepPoint> SweepPoints(const Plan& plan) {
  std::vector<SweepPoint> points = {{}};
  for (const SweepAxis& axis : plan.sweep) {
    std::vector<SweepPoint> next;
    for (const SweepPoint& point : points) {
      for (const std::string& value : axis.values) {
        SweepPoint p = point;
        p.emplace_back(axis.name, value);
        next.push_back(std::move(p));
      }
    }
    points = std::move(next);
  }
  return points;
}

StatusOr<std::vector<PhasePlan>> PhasesAt(const Plan& plan, const SweepPoint& point,
                                          int repetition) {
  std::vector<PhasePlan> phases = plan.phases;
  for (PhasePlan& phase : phases) {
    phase.repetition = repetition;
    phase.sweep_point = point;
    for (const auto& [key, value] : point) {
      Status s = SetPhaseParameter(key, value, &phase.spec);
      if (absl::IsNotFound(s)) continue;  // A value for other phases, or for the hooks.
      if (!s.ok()) return common::Annotate(s, StrCat("phase '", phase.name, "'"));
      // A host's own spec (a fio job file that differs by host) takes the point's value too.
      for (auto& [host, spec] : phase.host_specs) {
        RETURN_IF_ERROR(common::Annotate(SetPhaseParameter(key, value, &spec),
                                         StrCat("phase '", phase.name, "'")));
      }
    }
    RETURN_IF_ERROR(common::Annotate(ValidatePhase(phase), StrCat("phase '", phase.name, "'")));
  }
  return phases;
}

StatusOr<std::string> ExpandHook(std::string_view line, const SweepPoint& point) {
  std::string out;
  size_t at = 0;
  while (at < line.size()) {
    const size_t open = line.find('{', at);
    if (open == std::string_view::npos) break;
    const size_t close = line.find('}', open);
    if (close == std::string_view::npos) break;
    const std::string_view name = line.substr(open + 1, close - open - 1);
    out.append(line.substr(at, open - at));
    auto it =
        std::find_if(point.begin(), point.end(), [&](const auto& kv) { return kv.first == name; });
    // Shell syntax such as ${VAR} or {a,b} is left alone unless it names a sweep axis.
    const bool identifier =
        !name.empty() &&
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
            std::string_view::npos;
    const bool shell_variable = open > 0 && line[open - 1] == '$';
    if (it != point.end() && !shell_variable) {
      out += it->second;
    } else if (identifier && !shell_variable) {
      return absl::InvalidArgumentError(
          StrCat("hook '", line, "' uses {", name, "}, which the sweep does not define"));
    } else {
      out.append(line.substr(open, close - open + 1));
    }
    at = close + 1;
  }
  out.append(line.substr(std::min(at, line.size())));
  return out;
}

}  // namespace stormark::controller
