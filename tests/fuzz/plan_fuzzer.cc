// Fuzzes the plan parser (controller/plan/plan.h): any bytes give a plan or one error, never a
// crash, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "controller/plan/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto plan = stormark::controller::ParsePlan(text, "fuzz.yaml");
  if (plan.ok()) {
    // Everything the controller does with a valid plan before contacting an agent.
    for (const auto& point : stormark::controller::SweepPoints(*plan)) {
      auto phases = stormark::controller::PhasesAt(*plan, point, 0);
      if (!phases.ok()) continue;
      for (const auto& phase : *phases) {
        (void)stormark::controller::ValidatePhase(phase);
        (void)phase.Describe();
      }
      for (const auto& line : plan->setup) (void)stormark::controller::ExpandHook(line, point);
    }
  }
  return 0;
}
