#include "controller/fleet.h"

#include <algorithm>
#include <system_error>
#include <thread>

#include "common/strings.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StrCat;

// Runs fn(i) for i in [0, n) on n threads and waits for all. If the system refuses a
// thread, the remaining calls run on this one: slower, but every host is still served.
void ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  std::vector<std::thread> threads;
  threads.reserve(n);
  size_t i = 0;
  try {
    for (; i < n; ++i) threads.emplace_back(fn, i);
  } catch (const std::system_error&) {
    for (; i < n; ++i) fn(i);
  }
  for (auto& t : threads) t.join();
}

// Time between the start decision and the start instant: enough for the Run calls to reach
// every agent, whose round trips were measured.
constexpr int64_t kMinStartLeadNanos = 250'000'000;

}  // namespace

Fleet::Fleet(std::vector<std::unique_ptr<AgentClient>> clients, const common::Clock& clock)
    : clients_(std::move(clients)), host_errors_(clients_.size()), clock_(clock) {}

std::vector<Status> Fleet::ConnectAll() {
  std::vector<Status> statuses(clients_.size());
  ParallelFor(clients_.size(), [&](size_t i) {
    Status s = clients_[i]->Connect();
    if (s.ok()) s = clients_[i]->SyncClock();
    statuses[i] = s;
    host_errors_[i] = s.ok() ? "" : std::string(s.message());
  });
  return statuses;
}

PhaseOutcome Fleet::RunPhase(const PhasePlan& plan, const std::string& phase_id,
                             const ProgressFn& progress, RunMode mode) {
  PhaseOutcome outcome;
  outcome.plan = plan;
  outcome.phase_id = phase_id;
  outcome.mode = mode;
  outcome.hosts.resize(clients_.size());
  for (size_t i = 0; i < clients_.size(); ++i) {
    outcome.hosts[i].host = clients_[i]->host();
    outcome.hosts[i].clock = clients_[i]->clock();
  }
  {
    std::lock_guard<std::mutex> lock(phase_mu_);
    current_phase_ = phase_id;
  }
  if (mode == RunMode::kSequential) {
    for (size_t i = 0; i < clients_.size(); ++i) RunGroup({i}, progress, &outcome);
  } else {
    std::vector<size_t> all(clients_.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    RunGroup(all, progress, &outcome);
  }
  {
    std::lock_guard<std::mutex> lock(phase_mu_);
    current_phase_.clear();
  }
  if (mode == RunMode::kConcurrent) MeasureStartSkew(&outcome);
  return outcome;
}

void Fleet::RunGroup(const std::vector<size_t>& group, const ProgressFn& progress,
                     PhaseOutcome* outcome) {
  const PhasePlan& plan = outcome->plan;
  const std::string& phase_id = outcome->phase_id;

  // 1. Prepare everywhere; the barrier is the join.
  // One byte per host: threads write their own element (a vector<bool> would share words).
  std::vector<char> prepared(clients_.size(), 0);
  ParallelFor(group.size(), [&](size_t k) {
    const size_t i = group[k];
    HostOutcome& host = outcome->hosts[i];
    AgentClient& client = *clients_[i];
    if (!host_errors_[i].empty()) {
      host.error = host_errors_[i];
      return;
    }
    if (aborted_) {
      host.error = "interrupted before the phase";
      return;
    }
    // Clocks drift over a long run: measure the offset again for every phase.
    if (Status synced = client.SyncClock(); !synced.ok()) {
      host.error = std::string(synced.message());
      return;
    }
    host.clock = client.clock();
    auto target = client.ResolveTarget(plan.target);
    if (!target.ok()) {
      host.error = std::string(target.status().message());
      host.target = plan.target;
      return;
    }
    host.target = *target;
    stormark::v1::PhaseSpec spec = plan.spec;
    spec.set_phase_id(phase_id);
    spec.set_target(*target);
    auto reply = client.Prepare(spec);
    if (!reply.ok()) {
      host.error = StrCat("prepare failed: ", reply.status().message());
      return;
    }
    prepared[i] = 1;
  });

  // 2. One start instant for all, a little ahead of the slowest round trip.
  int64_t max_rtt = 0;
  for (size_t i : group) {
    if (prepared[i]) max_rtt = std::max(max_rtt, clients_[i]->clock().rtt_nanos);
  }
  const int64_t start_at = clock_.NowUnixNanos() + kMinStartLeadNanos + 4 * max_rtt;
  if (outcome->start_at_unix_nanos == 0) outcome->start_at_unix_nanos = start_at;

  // 3. Run everywhere.
  ParallelFor(group.size(), [&](size_t k) {
    const size_t i = group[k];
    if (!prepared[i]) return;
    HostOutcome& host = outcome->hosts[i];
    if (aborted_) {
      host.error = "interrupted before the phase started";
    } else {
      auto result = clients_[i]->Run(phase_id, start_at,
                                     [&](const stormark::v1::RunUpdate::Progress& p) {
                                       if (progress) progress(i, p);
                                     });
      if (!result.ok()) {
        host.error = std::string(result.status().message());
      } else {
        host.result = std::move(*result);
        if (host.result->state() != stormark::v1::PhaseResult::SUCCEEDED) {
          // An aborted phase's reason says "aborted" itself.
          host.error = host.result->state() == stormark::v1::PhaseResult::ABORTED
                           ? host.result->error()
                           : StrCat("failed: ", host.result->error());
        }
      }
    }
    // 4. Cleanup, whatever happened; a lost agent removes its files itself.
    Status cleaned = clients_[i]->Cleanup(phase_id);
    if (!cleaned.ok() && host.error.empty()) {
      host.error = StrCat("cleanup failed: ", cleaned.message());
    }
  });
}

void Fleet::MeasureStartSkew(PhaseOutcome* outcome) {
  // Start skew on the controller's clock.
  int64_t first = INT64_MAX, last = INT64_MIN, u1 = 0, u2 = 0;
  for (const HostOutcome& host : outcome->hosts) {
    if (!host.result || host.result->start_unix_nanos() == 0) continue;
    const int64_t start = host.result->start_unix_nanos() - host.clock.offset_nanos;
    first = std::min(first, start);
    last = std::max(last, start);
    const int64_t u = host.clock.uncertainty_nanos;
    if (u > u1) {
      u2 = u1;
      u1 = u;
    } else if (u > u2) {
      u2 = u;
    }
  }
  if (first != INT64_MAX) {
    outcome->start_skew_nanos = last - first;
    outcome->start_skew_uncertainty_nanos = u1 + u2;
  }
}

void Fleet::AbortAll() {
  aborted_ = true;
  std::string phase;
  {
    std::lock_guard<std::mutex> lock(phase_mu_);
    phase = current_phase_;
  }
  if (phase.empty()) return;
  ParallelFor(clients_.size(), [&](size_t i) {
    if (host_errors_[i].empty()) clients_[i]->Abort(phase);
  });
}

}  // namespace stormark::controller
