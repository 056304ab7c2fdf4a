#include "bench/fleet_sim/phase_log.h"

#include <algorithm>

#include "nlohmann/json.hpp"

namespace stormark::fleet_sim {
namespace {

// `value` into the range [*lo, *hi], the first of `count` values setting both.
void Widen(int64_t value, int64_t count, int64_t* lo, int64_t* hi) {
  *lo = count == 1 ? value : std::min(*lo, value);
  *hi = count == 1 ? value : std::max(*hi, value);
}

}  // namespace

PhaseLog::Phase& PhaseLog::Find(const std::string& phase_id) {
  for (Phase& p : phases_) {
    if (p.phase_id == phase_id) return p;
  }
  phases_.push_back(Phase{.phase_id = phase_id});
  return phases_.back();
}

void PhaseLog::Prepared(const std::string& phase_id, int64_t unix_nanos) {
  absl::MutexLock lock(&mu_);
  Phase& p = Find(phase_id);
  ++p.prepares;
  Widen(unix_nanos, p.prepares, &p.first_prepare, &p.last_prepare);
}

void PhaseLog::RunReceived(const std::string& phase_id, int64_t unix_nanos,
                           int64_t start_at_nanos) {
  absl::MutexLock lock(&mu_);
  Phase& p = Find(phase_id);
  ++p.runs;
  Widen(unix_nanos, p.runs, &p.first_run, &p.last_run);
  Widen(start_at_nanos, p.runs, &p.start_at_min, &p.start_at_max);
  if (unix_nanos > start_at_nanos) ++p.runs_after_start;
}

void PhaseLog::Woken(const std::string& phase_id, int64_t timer_late_nanos) {
  absl::MutexLock lock(&mu_);
  Phase& p = Find(phase_id);
  ++p.woken;
  p.timer_late_max = std::max(p.timer_late_max, timer_late_nanos);
  p.timer_late_sum += timer_late_nanos;
}

void PhaseLog::Ended(const std::string& phase_id, int64_t late_nanos) {
  absl::MutexLock lock(&mu_);
  Phase& p = Find(phase_id);
  ++p.ended;
  p.result_late_max = std::max(p.result_late_max, late_nanos);
}

std::string PhaseLog::Json() const {
  absl::MutexLock lock(&mu_);
  nlohmann::json out = nlohmann::json::array();
  for (const Phase& p : phases_) {
    out.push_back({{"phase_id", p.phase_id},
                   {"prepares", p.prepares},
                   {"first_prepare_unix_nanos", p.first_prepare},
                   {"last_prepare_unix_nanos", p.last_prepare},
                   {"runs", p.runs},
                   {"first_run_unix_nanos", p.first_run},
                   {"last_run_unix_nanos", p.last_run},
                   {"start_at_min_unix_nanos", p.start_at_min},
                   {"start_at_max_unix_nanos", p.start_at_max},
                   {"runs_after_start", p.runs_after_start},
                   {"woken", p.woken},
                   {"timer_late_max_nanos", p.timer_late_max},
                   {"timer_late_mean_nanos", p.woken > 0 ? p.timer_late_sum / p.woken : 0},
                   {"ended", p.ended},
                   {"result_late_max_nanos", p.result_late_max}});
  }
  return out.dump(1);
}

}  // namespace stormark::fleet_sim
