#include "controller/fleet/fleet.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/strings.h"
#include "controller/fleet/packed_series.h"
#include "controller/fleet/throttle.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// Time between the start decision and the start instant: enough for the Run calls to reach
// every agent, whose round trips were measured.
constexpr int64_t kMinStartLeadNanos = 250'000'000;
// Exchanges of the clock sync right after the prepare barrier, which the start instant is sent
// with: a few, as the one at connect has 8. Their time also measures the fan-out: how long one
// small message to every prepared host and its answer take, which the start lead must cover.
constexpr int kBarrierSyncRounds = 4;
// Exchanges of the clock sync after a phase's end: a few, as the one after its barrier has 4.
constexpr int kPhaseEndSyncRounds = 3;
// Calls in flight at once. Connects: each may be a TLS handshake, CPU on this side, and a burst
// of SYNs. Prepares: each carries a phase spec, and its reply the agent's facts.
constexpr size_t kConnectsInFlight = 256;
constexpr size_t kPreparesInFlight = 2048;
// Clock syncs after the barrier and after the phase. A round trip is half the stated
// uncertainty, and every exchange in flight beside it waits in the same queues: all at once,
// 40,000 exchanges at 10,000 hosts queued long enough to time out; 512 at once still gave
// +-36 ms at 1,000 hosts and +-130 ms at 10,000 (bench/fleet_sim.py). A few keep each round
// trip near the network's and cost little time, as each takes a fraction of a millisecond.
constexpr size_t kSyncsInFlight = 32;
// A sync whose best round trip is above both of these (the fleet's median times the factor)
// is taken once more.
constexpr int64_t kSlowSyncNanos = 2'000'000;
constexpr int64_t kSlowSyncFactor = 4;
constexpr size_t kUnbounded = SIZE_MAX;
// The most the lead learned from late starts may add.
constexpr int64_t kMaxLearnedLeadNanos = 5'000'000'000;

// Hands host i on to `host_done` (when set), then puts back into its result the series it
// left packed.
void HandOn(const Fleet::HostDoneFn& host_done, size_t i, HostOutcome* host) {
  if (host_done) host_done(i, host);
  if (host->packed_series.empty()) return;
  // Packed by Fleet::Finished from this very result: they fit.
  if (host->result) (void)UnpackSeries(host->packed_series, &*host->result);
  std::string().swap(host->packed_series);
}

}  // namespace

Fleet::Fleet(std::vector<std::unique_ptr<AgentClient>> clients, const common::Clock& clock,
             FleetOptions options)
    : clients_(std::move(clients)),
      clock_(clock),
      options_(options),
      host_errors_(clients_.size()),
      running_(clients_.size()),
      deadlines_(clients_.size()) {}

Fleet::~Fleet() {
  monitor_.reset();
  JoinBackground();
}

std::string Fleet::host_error(size_t i) const {
  absl::MutexLock lock(&mu_);
  return host_errors_[i];
}

std::string Fleet::stopped() const {
  absl::MutexLock lock(&mu_);
  return stop_reason_;
}

std::vector<Status> Fleet::ConnectAll() {
  std::vector<Status> statuses(clients_.size());
  {
    Throttle connects(kConnectsInFlight);
    for (size_t i = 0; i < clients_.size(); ++i) {
      connects.Acquire();
      clients_[i]->ConnectAsync(5000, [this, i, &statuses, &connects](const Status& s) {
        if (!s.ok()) {
          statuses[i] = s;
          connects.Release();
          return;
        }
        clients_[i]->SyncClockAsync(8, [i, &statuses, &connects](const Status& synced) {
          statuses[i] = synced;
          connects.Release();
        });
      });
    }
  }  // Every call is over here.
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < clients_.size(); ++i) {
      host_errors_[i] = statuses[i].ok() ? "" : std::string(statuses[i].message());
    }
  }
  std::vector<AgentClient*> raw;
  for (const auto& client : clients_) raw.push_back(client.get());
  monitor_ = std::make_unique<HeartbeatMonitor>(
      raw, options_.heartbeat, clock_,
      [this](size_t i, const std::string& reason) { HostLost(i, reason); },
      [this] { CheckDeadlines(); });
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (statuses[i].ok()) monitor_->Watch(i, true);
  }
  if (options_.fail_fast) {
    for (size_t i = 0; i < clients_.size(); ++i) {
      if (!statuses[i].ok()) {
        HostFailed(i, std::string(statuses[i].message()));
        break;
      }
    }
  }
  return statuses;
}

void Fleet::AbortInBackground(size_t i, const std::string& phase_id) {
  {
    absl::MutexLock lock(&mu_);
    ++background_;
  }
  clients_[i]->AbortAsync(phase_id, [this] {
    absl::MutexLock lock(&mu_);
    --background_;
    background_done_.NotifyAll();
  });
}

void Fleet::JoinBackground() {
  absl::MutexLock lock(&mu_);
  background_done_.Wait(mu_,
                        [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return background_ == 0; });
}

void Fleet::HostFailed(size_t i, const std::string& error) {
  if (!options_.fail_fast || aborted_) return;
  std::string phase;
  {
    absl::MutexLock lock(&mu_);
    if (!stop_reason_.empty()) return;
    stop_reason_ = StrCat("--fail-fast: stopped the run after host ", clients_[i]->host(),
                          " failed (", error, ")");
    phase = current_phase_;
  }
  stopped_ = true;
  if (phase.empty()) return;
  // Abort the phase everywhere else, off this thread: an abort may wait for a busy agent.
  for (size_t k = 0; k < clients_.size(); ++k) {
    if (k == i || !host_error(k).empty()) continue;
    AbortInBackground(k, phase);
  }
}

void Fleet::HostLost(size_t i, const std::string& reason) {
  {
    absl::MutexLock lock(&mu_);
    if (!host_errors_[i].empty()) return;
    host_errors_[i] = reason;
  }
  // Every call to it in flight (a Run stream, a Prepare) returns at once; the agent aborts
  // the phase itself when its lease runs out.
  clients_[i]->GiveUp();
  HostFailed(i, reason);
}

std::optional<int64_t> Fleet::DueAt(const Running& r) const {
  if (!r.overdue.empty()) return std::nullopt;
  // One past each limit: a host is overdue once it is past it. Saturated: a limit of years
  // (a plan's `deadline: 2500000h`) must not wrap round to the past.
  auto past = [](int64_t since, int64_t limit) -> int64_t {
    return limit >= INT64_MAX - 1 - since ? INT64_MAX : since + limit + 1;
  };
  if (r.active && r.arm_started != 0) return past(r.arm_started, options_.arm_deadline_nanos);
  if (r.preparing) return past(r.prepare_started, r.prepare_deadline->limit_nanos);
  if (!r.active || !r.deadline || r.start_at == INT64_MAX) return std::nullopt;
  const std::optional<int64_t> limit = r.deadline->LimitNanos();
  if (!limit) return std::nullopt;
  return past(r.start_at, *limit);
}

void Fleet::ScheduleDeadline(size_t i) {
  if (const std::optional<int64_t> due = DueAt(running_[i])) {
    deadlines_.Set(i, *due);
  } else {
    deadlines_.Cancel(i);
  }
}

void Fleet::CheckDeadlines() {
  const int64_t now = clock_.NowUnixNanos();
  std::vector<std::pair<size_t, std::string>> overdue;
  std::vector<std::pair<size_t, std::string>> not_armed;
  const int64_t arm_limit = options_.arm_deadline_nanos;
  {
    absl::MutexLock lock(&mu_);
    // Only the hosts whose timer is due: a fleet of thousands is not scanned every round.
    for (size_t i : deadlines_.TakeDue(now)) {
      Running& r = running_[i];
      if (r.active && r.arm_started != 0 && r.overdue.empty() && now - r.arm_started > arm_limit) {
        // An agent that takes the Run and never says it is ready would hold the barrier, and
        // the phase has no instant yet for its deadline to count from.
        r.overdue = fmt::format(
            "host {} did not arm phase '{}' within {:g} s of its Run (is it overloaded or "
            "broken?); given up",
            clients_[i]->host(), r.phase_id, static_cast<double>(arm_limit) / 1e9);
        not_armed.emplace_back(i, r.overdue);
        continue;
      }
      if (r.preparing && r.overdue.empty() &&
          now - r.prepare_started > r.prepare_deadline->limit_nanos) {
        r.overdue = fmt::format(
            "prepare of phase '{}' on host {} did not finish in {:g} s ({}); "
            "aborted there",
            r.phase_name, clients_[i]->host(),
            static_cast<double>(r.prepare_deadline->limit_nanos) / 1e9, r.prepare_deadline->why);
        overdue.emplace_back(i, r.phase_id);
        continue;
      }
      if (r.active && r.deadline && r.overdue.empty() && now >= r.start_at) {
        if (std::string why = r.deadline->Overdue(now - r.start_at); !why.empty()) {
          r.overdue = StrCat("phase deadline: ", why, "; aborted on this host");
          overdue.emplace_back(i, r.phase_id);
          continue;
        }
      }
      // Not overdue after all: a size-bound phase's limit moved on with its progress.
      ScheduleDeadline(i);
    }
  }
  for (auto& [i, phase] : overdue) AbortInBackground(i, phase);
  for (auto& [i, why] : not_armed) HostLost(i, why);
}

PhaseOutcome Fleet::RunPhase(const PhasePlan& plan, const std::string& phase_id,
                             const ProgressFn& progress, RunMode mode,
                             const HostDoneFn& host_done) {
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
    absl::MutexLock lock(&mu_);
    current_phase_ = phase_id;
  }
  if (mode == RunMode::kSequential) {
    for (size_t i = 0; i < clients_.size(); ++i) RunGroup({i}, progress, host_done, &outcome);
  } else {
    std::vector<size_t> all(clients_.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    RunGroup(all, progress, host_done, &outcome);
  }
  {
    absl::MutexLock lock(&mu_);
    current_phase_.clear();
  }
  JoinBackground();
  if (mode == RunMode::kConcurrent) MeasureStartSkew(&outcome);
  return outcome;
}

void Fleet::RunGroup(const std::vector<size_t>& group, const ProgressFn& progress,
                     const HostDoneFn& host_done, PhaseOutcome* outcome) {
  const std::string& phase_id = outcome->phase_id;
  const PhasePlan& plan = outcome->plan;

  // 1. Prepare everywhere; the barrier is the last answer. One byte per host: callbacks write
  // their own element (a vector<bool> would share words). A host whose agent arms runs opens
  // its Run stream as soon as it is prepared, so that the start instant, chosen once every host
  // is armed, has only one small Start message per host to cover, not the Run calls' set-up.
  std::vector<char> prepared(clients_.size(), 0);
  std::vector<char> armed(clients_.size(), 0);
  Throttle runs(kUnbounded);    // Every host's run and cleanup; waited for after step 4.
  Throttle arming(kUnbounded);  // Runs opened and not yet armed.
  {
    Throttle prepares(kPreparesInFlight);
    for (size_t i : group) {
      prepares.Acquire();
      PrepareHost(i, plan, phase_id, &outcome->hosts[i],
                  [this, i, &plan, &phase_id, &progress, &host_done, &prepared, &armed, &prepares,
                   &runs, &arming, outcome](bool ok) {
                    prepared[i] = ok ? 1 : 0;
                    const std::string& error = outcome->hosts[i].error;
                    if (!ok) {
                      if (monitor_) monitor_->SetPhase(i, "");
                      if (!error.starts_with("not run: ") && !error.starts_with("interrupted")) {
                        HostFailed(i, error);
                      }
                    } else if (clients_[i]->arms_runs()) {
                      arming.Acquire();
                      runs.Acquire();
                      RunHost(
                          i, plan, phase_id, 0, progress, &outcome->hosts[i],
                          [i, &armed, &arming](bool is_armed) {
                            armed[i] = is_armed ? 1 : 0;
                            arming.Release();
                          },
                          [i, &runs, &host_done, outcome] {
                            HandOn(host_done, i, &outcome->hosts[i]);
                            runs.Release();
                          },
                          host_done != nullptr);
                    }
                    prepares.Release();
                  });
    }
  }
  arming.WaitIdle();
  // The hosts that take part: prepared, and armed if their agent arms runs.
  std::vector<size_t> starting;
  for (size_t i : group) {
    if (prepared[i] && (armed[i] || !clients_[i]->arms_runs())) starting.push_back(i);
  }

  // 2. The clocks again, right after the barrier: a Prepare may have taken minutes, and the
  // start instant is sent with these offsets. Their time is the fan-out the lead must cover.
  const int64_t synced_from = clock_.NowUnixNanos();
  // A re-sync that failed keeps the estimate from before, which the end-of-phase sync then
  // brackets: the host runs, and its uncertainty says how good the clock was. Held apart
  // until every run is over: a host aborted during this sync may have ended already, and
  // host_done reads its outcome on another thread.
  std::vector<std::optional<ClockEstimate>> barrier_clocks(clients_.size());
  SyncClocks(starting, kBarrierSyncRounds, [this, &barrier_clocks](size_t i, const Status&) {
    barrier_clocks[i] = clients_[i]->clock();
  });
  const int64_t fan_out = (clock_.NowUnixNanos() - synced_from) / kBarrierSyncRounds;

  // 3. One start instant for all: ahead of the slowest round trip, and of the time it takes to
  // reach every host, as the syncs just measured.
  int64_t max_rtt = 0;
  for (size_t i : starting) max_rtt = std::max(max_rtt, clients_[i]->clock().rtt_nanos);
  const int64_t lead = kMinStartLeadNanos + 4 * max_rtt + 2 * fan_out + learned_lead_nanos_;
  const int64_t start_at = clock_.NowUnixNanos() + lead;
  if (outcome->start_at_unix_nanos == 0) {
    outcome->start_at_unix_nanos = start_at;
    outcome->start_lead_nanos = lead;
  }

  // 4. Start everywhere (an armed host by a Start, any other by its Run), then wait for every
  // run and cleanup.
  {
    Throttle starts(kUnbounded);
    const bool halted_now = (aborted_ || stopped_) && !plan.runs_after_halt;
    for (size_t i : starting) {
      if (!clients_[i]->arms_runs()) {
        runs.Acquire();
        RunHost(
            i, plan, phase_id, start_at, progress, &outcome->hosts[i], nullptr,
            [i, &runs, &host_done, outcome] {
              HandOn(host_done, i, &outcome->hosts[i]);
              runs.Release();
            },
            host_done != nullptr);
      } else if (halted_now) {
        AbortInBackground(i, phase_id);  // Armed, and no longer to start.
      } else {
        starts.Acquire();
        StartHost(i, phase_id, start_at, [&starts] { starts.Release(); });
      }
    }
  }
  runs.WaitIdle();
  for (size_t i : starting) {
    if (barrier_clocks[i]) outcome->hosts[i].clock = *barrier_clocks[i];
  }

  // 5. The clocks once more, now that every host's phase and cleanup are over: the phase's start
  // lies between this sync and the one after the barrier, so how far the offset moved in
  // between is part of its uncertainty (BracketPhase). Taken as each host ended, behind the
  // other hosts' results arriving, these round trips measured the controller's queues (+-20 ms
  // at 1,000 simulated hosts).
  {
    std::vector<size_t> hosts;
    for (size_t i : group) {
      const HostOutcome& host = outcome->hosts[i];
      if (host.result && host.result->start_unix_nanos() != 0 && host_error(i).empty()) {
        hosts.push_back(i);
      }
    }
    SyncClocks(hosts, kPhaseEndSyncRounds, [this, outcome](size_t i, const Status& synced) {
      HostOutcome& host = outcome->hosts[i];
      if (synced.ok()) host.clock = BracketPhase(host.clock, clients_[i]->clock());
    });
  }

  // Start or Run calls that reached their agents after the instant: give later phases more
  // lead. An armed host's late start is its own (a busy host, its scheduler), which no lead
  // cures; an older agent's start late says when its Run came.
  int64_t latest = 0;
  for (size_t i : group) {
    const auto& result = outcome->hosts[i].result;
    if (result && !clients_[i]->arms_runs()) latest = std::max(latest, result->start_late_nanos());
  }
  {
    absl::MutexLock lock(&mu_);
    latest = std::max(latest, late_start_message_nanos_);
    late_start_message_nanos_ = 0;
  }
  if (latest > 1'000'000) {
    learned_lead_nanos_ = std::min(kMaxLearnedLeadNanos, std::max(learned_lead_nanos_, 2 * latest));
  }
}

void Fleet::SyncClocks(const std::vector<size_t>& hosts, int rounds,
                       const std::function<void(size_t, const Status&)>& synced) {
  std::vector<Status> statuses(clients_.size());
  {
    Throttle syncs(kSyncsInFlight);
    for (size_t i : hosts) {
      syncs.Acquire();
      clients_[i]->SyncClockAsync(rounds, [i, &statuses, &syncs](const Status& status) {
        statuses[i] = status;
        syncs.Release();
      });
    }
  }
  // Hosts whose best round trip came out far above the fleet's usual one were measured behind
  // a stall (on this side, most often): once more, keeping the better estimate.
  std::vector<int64_t> rtts;
  for (size_t i : hosts) {
    if (statuses[i].ok()) rtts.push_back(clients_[i]->clock().rtt_nanos);
  }
  if (!rtts.empty()) {
    std::nth_element(rtts.begin(), rtts.begin() + rtts.size() / 2, rtts.end());
    const int64_t slow = std::max(kSlowSyncNanos, kSlowSyncFactor * rtts[rtts.size() / 2]);
    Throttle syncs(kSyncsInFlight);
    for (size_t i : hosts) {
      if (!statuses[i].ok() || clients_[i]->clock().rtt_nanos <= slow) continue;
      syncs.Acquire();
      clients_[i]->RefineClockAsync(rounds, [&syncs](const Status&) { syncs.Release(); });
    }
  }
  for (size_t i : hosts) synced(i, statuses[i]);
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
    absl::MutexLock lock(&mu_);
    phase = current_phase_;
  }
  if (phase.empty()) return;
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (host_error(i).empty()) AbortInBackground(i, phase);
  }
}

}  // namespace stormark::controller
