// The file a phase hands over to the next one (phase_runner.h, agent/workloads/handed_over.h):
// kept at the writer's Cleanup, given to the one phase it is for, and removed otherwise.
#include "agent/runner/phase_runner.h"

#include "common/log_text.h"
#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::agent {

std::optional<PhaseRunner::Kept> PhaseRunner::KeepHandedOverLocked(Workload& workload) {
  std::optional<Kept> before = std::move(kept_);
  kept_.reset();
  // Nothing is kept by an agent that is stopping: Shutdown removed what was kept already.
  if (shut_down_ || spec_.hand_over_to().empty() || !common::IsValidName(spec_.hand_over_to())) {
    return before;
  }
  std::unique_ptr<HandedOver> data = workload.HandOver();
  if (data == nullptr) return before;
  data->from_phase = spec_.phase_id();
  kept_ = Kept{.data = std::move(data),
               .to_phase = spec_.hand_over_to(),
               .target = spec_.target(),
               .owner = owner_.identity(),
               .lease_nanos = int64_t{spec_.heartbeat_timeout_ms()} * 1'000'000,
               .renewed_mono = clock_.MonotonicNanos()};
  return before;
}

std::unique_ptr<HandedOver> PhaseRunner::TakeKeptLocked(const stormark::v1::PhaseSpec& spec,
                                                        const Identity& caller,
                                                        std::optional<Kept>* stale) {
  if (!kept_) return nullptr;
  std::optional<Kept> kept = std::move(kept_);
  kept_.reset();
  if (kept->to_phase == spec.phase_id() && kept->target == spec.target() &&
      kept->owner == caller.name) {
    return std::move(kept->data);
  }
  *stale = std::move(kept);
  return nullptr;
}

void PhaseRunner::RemoveKept(std::unique_ptr<HandedOver> data) {
  if (data != nullptr && data->dir != nullptr) data->dir->Cleanup();
}

std::string PhaseRunner::ReclaimKept() {
  std::optional<Kept> expired;
  int64_t silent = 0;
  {
    absl::MutexLock lock(&mu_);
    if (!kept_) return "";
    silent = clock_.MonotonicNanos() - kept_->renewed_mono;
    const int64_t limit = kept_->lease_nanos > 0 ? kept_->lease_nanos : reclaim_after_nanos_;
    if (silent < limit) return "";
    expired = std::move(kept_);
    kept_.reset();
  }
  const std::string from = expired->data->from_phase;
  RemoveKept(std::move(expired->data));
  return fmt::format(
      "removed the file phase '{}' kept for phase '{}' on target '{}': nothing came for it in "
      "{:.1f} s",
      from, expired->to_phase, expired->target, static_cast<double>(silent) / 1e9);
}

}  // namespace stormark::agent
