#include "bench/fleet_sim/sim_host.h"

#include <string>

namespace stormark::fleet_sim {

void FillHostEnvironment(google::protobuf::Map<std::string, std::string>* out) {
  (*out)["kernel"] = kSimKernel;
  (*out)["cpu_model"] = kSimCpuModel;
  (*out)["cpu_count"] = std::to_string(kSimCpuCount);
  (*out)["ram_bytes"] = std::to_string(kSimRamBytes);
  (*out)["cpu_governor"] = "none";
  (*out)["vm.dirty_ratio"] = "20";
  (*out)["vm.dirty_background_ratio"] = "10";
  (*out)["vm.dirty_expire_centisecs"] = "3000";
  (*out)["vm.dirty_writeback_centisecs"] = "500";
}

}  // namespace stormark::fleet_sim
