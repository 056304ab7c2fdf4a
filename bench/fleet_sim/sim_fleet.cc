#include "bench/fleet_sim/sim_fleet.h"

#include <time.h>

#include <charconv>
#include <random>

#include "bench/fleet_sim/sim_host.h"
#include "common/strings.h"
#include "common/version.h"
#include "fmt/format.h"

namespace stormark::fleet_sim {

SimAgent::SimAgent(size_t index, int64_t clock_offset_nanos, Lie lie)
    : index_(index),
      clock_offset_nanos_(clock_offset_nanos),
      lie_(lie),
      hostname_(fmt::format("sim-{:05}", index)) {}

int64_t SimAgent::NowUnixNanos() const {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec + clock_offset_nanos_;
}

stormark::v1::AgentInfo SimAgent::Info() const {
  stormark::v1::AgentInfo info;
  info.set_agent_version(common::StrCat(common::kSoftwareVersion, "-fleet-sim"));
  *info.mutable_protocol() = common::OurProtocol();
  info.set_hostname(hostname_);
  info.set_kernel(kSimKernel);
  info.set_cpu_model(kSimCpuModel);
  info.set_cpu_count(kSimCpuCount);
  info.set_ram_bytes(kSimRamBytes);
  FillHostEnvironment(info.mutable_environment());
  stormark::v1::TargetInfo* target = info.add_targets();
  target->set_name(kTargetName);
  target->set_kind("null");
  target->set_size_bytes(kSimNullSizeBytes);
  target->set_logical_block_size(512);
  target->set_disposable(true);
  info.add_workloads("randio");
  info.set_now_unix_nanos(NowUnixNanos());
  return info;
}

void SimAgent::Hold(std::shared_ptr<const PhaseShape> phase) {
  absl::MutexLock lock(&mu_);
  held_ = std::move(phase);
}

std::shared_ptr<const PhaseShape> SimAgent::Held() const {
  absl::MutexLock lock(&mu_);
  return held_;
}

void SimAgent::Arm(std::shared_ptr<ArmedRun> run) {
  absl::MutexLock lock(&mu_);
  armed_ = std::move(run);
}

std::shared_ptr<ArmedRun> SimAgent::Armed() const {
  absl::MutexLock lock(&mu_);
  return armed_;
}

bool SimAgent::Release(const std::string& phase_id) {
  absl::MutexLock lock(&mu_);
  if (!held_ || held_->phase_id != phase_id) return false;
  held_.reset();
  return true;
}

SimFleet::SimFleet(const std::vector<int64_t>& offsets_nanos, Lie lie, size_t liar)
    : by_port_(65536) {
  for (size_t i = 0; i < offsets_nanos.size(); ++i) {
    agents_.push_back(
        std::make_unique<SimAgent>(i, offsets_nanos[i], i == liar ? lie : Lie::kNone));
  }
}

void SimFleet::Bind(const std::vector<int>& ports) {
  for (size_t i = 0; i < ports.size() && i < agents_.size(); ++i) {
    by_port_[static_cast<size_t>(ports[i])].store(static_cast<int32_t>(i + 1),
                                                  std::memory_order_release);
  }
}

SimAgent* SimFleet::ForAuthority(std::string_view authority) {
  const size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos) return nullptr;
  int port = -1;
  const char* end = authority.data() + authority.size();
  auto [ptr, ec] = std::from_chars(authority.data() + colon + 1, end, port);
  if (ec != std::errc() || ptr != end || port < 0 || port >= static_cast<int>(by_port_.size())) {
    return nullptr;
  }
  const int32_t i = by_port_[static_cast<size_t>(port)].load(std::memory_order_acquire);
  return i == 0 ? nullptr : agents_[static_cast<size_t>(i - 1)].get();
}

std::vector<int64_t> SimFleet::SpreadOffsets(size_t count, int64_t spread_nanos) {
  std::vector<int64_t> offsets(count, 0);
  if (spread_nanos <= 0) return offsets;
  std::mt19937_64 random(23);
  std::uniform_int_distribution<int64_t> draw(-spread_nanos / 2, spread_nanos / 2);
  for (int64_t& offset : offsets) offset = draw(random);
  return offsets;
}

}  // namespace stormark::fleet_sim
