// Fuzzes the agent config parser (agent/config/config.h, agent/config/policy.h). Paths in the input
// are only looked at (stat, realpath), never written.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = stormark::agent::ParseAgentConfig(text, "fuzz.yaml");
  if (config.ok()) (void)config->TargetNames();
  return 0;
}
