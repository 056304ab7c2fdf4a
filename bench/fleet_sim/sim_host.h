// The host every simulated agent claims to be: small, fixed facts, the same for all, so that
// the controller's reports (the agents table, environment notes, JSON) have everything they
// read and find nothing that differs between hosts but the name.
#ifndef STORMARK_BENCH_FLEET_SIM_SIM_HOST_H_
#define STORMARK_BENCH_FLEET_SIM_SIM_HOST_H_

#include <cstdint>

#include "google/protobuf/map.h"

namespace stormark::fleet_sim {

inline constexpr char kSimKernel[] = "Linux 6.1.0-fleet-sim";
inline constexpr char kSimCpuModel[] = "stormark-fleet-sim virtual CPU";
inline constexpr uint32_t kSimCpuCount = 4;
inline constexpr uint64_t kSimRamBytes = uint64_t{8} << 30;
// The null target's size, as a real agent's default for `null: true`.
inline constexpr uint64_t kSimNullSizeBytes = uint64_t{1} << 40;

// The host keys of agent/host/environment.h that a real agent reads (AgentInfo.environment,
// PhaseResult.host_environment), with the values of a plain Debian host.
void FillHostEnvironment(google::protobuf::Map<std::string, std::string>* out);

}  // namespace stormark::fleet_sim

#endif  // STORMARK_BENCH_FLEET_SIM_SIM_HOST_H_
