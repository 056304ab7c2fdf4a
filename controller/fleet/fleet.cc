#include "controller/fleet/fleet.h"

#include <algorithm>
#include <cstdint>

#include "common/strings.h"
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
// Exchanges of the clock sync after a phase's end: a few, as the one before its Prepare has 8.
constexpr int kPhaseEndSyncRounds = 3;
// Exchanges of the clock sync right after the prepare barrier, which the start instant is sent
// with: a few, as the one at connect has 8. Their time also measures the fan-out: how long one
// small message to every prepared host and its answer take, which the start lead must cover.
constexpr int kBarrierSyncRounds = 4;
// Calls in flight at once. Connects: each may be a TLS handshake, CPU on this side, and a burst
// of SYNs. Prepares: each carries a phase spec, and its reply the agent's facts. Clock syncs
// after the barrier are small and keep the start tight: all at once.
constexpr size_t kConnectsInFlight = 256;
constexpr size_t kPreparesInFlight = 2048;
// Post-barrier clock syncs: all at once, 40,000 exchanges at 10,000 hosts queued in the
// controller long enough to time out (bench/fleet_sim.py); a bound keeps each round trip short.
constexpr size_t kBarrierSyncsInFlight = 512;
constexpr size_t kUnbounded = SIZE_MAX;
// The most the lead learned from late starts may add.
constexpr int64_t kMaxLearnedLeadNanos = 5'000'000'000;
// How long past its prepare deadline a Prepare call may still take to answer the abort.
constexpr int64_t kPrepareBackstopNanos = 60'000'000'000;
// How long removing a phase's files may take on a host (a large file on a slow disk).
constexpr int kCleanupTimeoutMs = 60'000;

}  // namespace

Fleet::Fleet(std::vector<std::unique_ptr<AgentClient>> clients, const common::Clock& clock,
             FleetOptions options)
    : clients_(std::move(clients)),
      clock_(clock),
      options_(options),
      host_errors_(clients_.size()),
      running_(clients_.size()) {}

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

void Fleet::CheckDeadlines() {
  const int64_t now = clock_.NowUnixNanos();
  std::vector<std::pair<size_t, std::string>> overdue;
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < running_.size(); ++i) {
      Running& r = running_[i];
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
      if (!r.active || !r.deadline || !r.overdue.empty() || now < r.start_at) continue;
      std::string why = r.deadline->Overdue(now - r.start_at);
      if (why.empty()) continue;
      r.overdue = StrCat("phase deadline: ", why, "; aborted on this host");
      overdue.emplace_back(i, r.phase_id);
    }
  }
  for (auto& [i, phase] : overdue) AbortInBackground(i, phase);
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
    absl::MutexLock lock(&mu_);
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
    absl::MutexLock lock(&mu_);
    current_phase_.clear();
  }
  JoinBackground();
  if (mode == RunMode::kConcurrent) MeasureStartSkew(&outcome);
  return outcome;
}

void Fleet::PrepareHost(size_t i, const PhasePlan& plan, const std::string& phase_id,
                        HostOutcome* host, std::function<void(bool)> done) {
  AgentClient& client = *clients_[i];
  if (std::string error = host_error(i); !error.empty()) {
    host->error = error;
    return done(false);
  }
  if (aborted_ && !plan.runs_after_halt) {
    host->error = "interrupted before the phase";
    return done(false);
  }
  if (stopped_ && !plan.runs_after_halt) {
    host->error = StrCat("not run: ", stopped());
    return done(false);
  }
  if (monitor_) monitor_->SetPhase(i, phase_id);
  // A fio job file that differs by host gives this host its own spec and target.
  const auto own_target = plan.host_targets.find(i);
  const std::string& wanted =
      own_target != plan.host_targets.end() ? own_target->second : plan.target;
  auto target = client.ResolveTarget(wanted);
  if (!target.ok()) {
    host->error = std::string(target.status().message());
    host->target = wanted;
    return done(false);
  }
  host->target = *target;
  const auto own_spec = plan.host_specs.find(i);
  stormark::v1::PhaseSpec spec = own_spec != plan.host_specs.end() ? own_spec->second : plan.spec;
  spec.set_hand_over_to(plan.spec.hand_over_to());
  spec.set_phase_id(phase_id);
  spec.set_target(*target);
  spec.set_heartbeat_timeout_ms(
      static_cast<uint32_t>(options_.heartbeat.timeout_nanos / 1'000'000));
  // Bounded: a set-up stuck in the kernel must not hold the barrier for ever. Past the
  // deadline CheckDeadlines aborts it on the agent, which answers within its
  // stuck_worker_after; the call's own deadline is the backstop for an agent that does not.
  const PrepareDeadline limit(plan.spec, plan.prepare_deadline_nanos);
  {
    absl::MutexLock lock(&mu_);
    Running& r = running_[i];
    r = Running();
    r.phase_id = phase_id;
    r.preparing = true;
    r.phase_name = plan.name;
    r.prepare_started = clock_.NowUnixNanos();
    r.prepare_deadline = limit;
  }
  client.PrepareAsync(
      spec, limit.limit_nanos + kPrepareBackstopNanos,
      [this, i, phase_id, host,
       done = std::move(done)](StatusOr<stormark::v1::PrepareReply> reply) {
        std::string overdue;
        {
          absl::MutexLock lock(&mu_);
          overdue = running_[i].overdue;
          running_[i] = Running();
        }
        if (!overdue.empty()) {
          // The set-up may have finished as the abort went out, which could not carry the
          // phase's token yet (only this reply brings it): abort again, with it.
          if (reply.ok()) AbortInBackground(i, phase_id);
          host->error = reply.ok() ? overdue : StrCat(overdue, ": ", reply.status().message());
          return done(false);
        }
        if (!reply.ok()) {
          host->error = StrCat("prepare failed: ", reply.status().message());
          return done(false);
        }
        done(true);
      });
}

void Fleet::RunHost(size_t i, const PhasePlan& plan, const std::string& phase_id, int64_t start_at,
                    const ProgressFn& progress, HostOutcome* host, std::function<void()> done) {
  if (aborted_ && !plan.runs_after_halt) {
    host->error = "interrupted before the phase started";
    return CleanUpHost(i, plan, phase_id, host, std::move(done));
  }
  if (stopped_ && !plan.runs_after_halt) {
    host->error = StrCat("not run: ", stopped());
    return CleanUpHost(i, plan, phase_id, host, std::move(done));
  }
  {
    absl::MutexLock lock(&mu_);
    const WorkloadKind* kind = KindOf(plan.spec);
    running_[i] = Running{.active = true,
                          .phase_id = phase_id,
                          .start_at = start_at,
                          .deadline = PhaseDeadline(plan.spec, plan.deadline_nanos,
                                                    kind ? kind->expected_bytes(plan.spec) : 0),
                          .overdue = "",
                          .preparing = false,
                          .phase_name = "",
                          .prepare_started = 0,
                          .prepare_deadline = std::nullopt};
  }
  clients_[i]->RunAsync(
      phase_id, start_at,
      [this, i, &progress](const stormark::v1::RunUpdate::Progress& p) {
        {
          absl::MutexLock lock(&mu_);
          if (running_[i].deadline) running_[i].deadline->Progress(p.elapsed_nanos(), p.bytes());
        }
        if (monitor_) monitor_->Heard(i);  // A stream that delivers is alive.
        if (progress) progress(i, p);
      },
      [this, i, &plan, phase_id, host,
       done = std::move(done)](StatusOr<stormark::v1::PhaseResult> result) mutable {
        Finished(i, std::move(result), host);
        // The clock again, right after the end: the phase's start lies between this sync and
        // the one after the barrier, so how far the offset moved in between is part of its
        // uncertainty.
        if (host->result && host->result->start_unix_nanos() != 0 && host_error(i).empty()) {
          clients_[i]->SyncClockAsync(kPhaseEndSyncRounds,
                                      [this, i, &plan, phase_id, host, before = host->clock,
                                       done = std::move(done)](const Status& synced) mutable {
                                        if (synced.ok())
                                          host->clock = BracketPhase(before, clients_[i]->clock());
                                        CleanUpHost(i, plan, phase_id, host, std::move(done));
                                      });
          return;
        }
        CleanUpHost(i, plan, phase_id, host, std::move(done));
      });
}

void Fleet::Finished(size_t i, StatusOr<stormark::v1::PhaseResult> result, HostOutcome* host) {
  std::string overdue;
  {
    absl::MutexLock lock(&mu_);
    overdue = running_[i].overdue;
    running_[i] = Running();
  }
  if (!result.ok()) {
    host->error = std::string(result.status().message());
  } else {
    host->result = std::move(*result);
    if (host->result->state() != stormark::v1::PhaseResult::SUCCEEDED) {
      // An aborted phase's reason says "aborted" itself.
      host->error = host->result->state() == stormark::v1::PhaseResult::ABORTED
                        ? host->result->error()
                        : StrCat("failed: ", host->result->error());
    }
  }
  // Our own reasons come first: the agent only knows it was told to stop.
  if (std::string lost = host_error(i); !lost.empty()) {
    host->error = lost;
  } else if (!overdue.empty()) {
    const bool stuck = host->result && !host->result->stuck_worker().empty();
    host->error = stuck ? StrCat(overdue, "; ", host->error) : overdue;
  } else if (!host->error.empty() && stopped_ && host->result &&
             host->result->state() == stormark::v1::PhaseResult::ABORTED) {
    host->error = StrCat("aborted: ", stopped());
  }
  if (!host->error.empty() && !host->error.starts_with("aborted: --fail-fast") &&
      !host->error.starts_with("not run: ")) {
    HostFailed(i, host->error);
  }
}

void Fleet::CleanUpHost(size_t i, const PhasePlan& plan, const std::string& phase_id,
                        HostOutcome* host, std::function<void()> done) {
  // Cleanup, whatever happened; a lost agent removes its files itself.
  if (!host_error(i).empty()) {
    if (monitor_) monitor_->SetPhase(i, "");
    return done();
  }
  clients_[i]->CleanupAsync(
      phase_id, kCleanupTimeoutMs,
      [this, i, name = plan.name, host, done = std::move(done)](const Status& cleaned,
                                                                std::vector<std::string> left) {
        if (!left.empty() && host->result) {
          // The files stay on the host: the user must hear where, and why.
          host->result->add_warnings(
              StrCat("cleanup left ", left.size(), " entr", left.size() == 1 ? "y" : "ies",
                     " on the target: ", left.front(), left.size() > 1 ? " (and more)" : ""));
        }
        if (absl::IsDeadlineExceeded(cleaned) && host->error.empty()) {
          host->error = fmt::format("cleanup of phase '{}' on host {} did not finish in {} s", name,
                                    clients_[i]->host(), kCleanupTimeoutMs / 1000);
        } else if (!cleaned.ok() && host->error.empty()) {
          host->error = StrCat("cleanup failed: ", cleaned.message());
        }
        if (monitor_) monitor_->SetPhase(i, "");
        done();
      });
}

void Fleet::RunGroup(const std::vector<size_t>& group, const ProgressFn& progress,
                     PhaseOutcome* outcome) {
  const std::string& phase_id = outcome->phase_id;
  const PhasePlan& plan = outcome->plan;

  // 1. Prepare everywhere; the barrier is the last answer. One byte per host: callbacks write
  // their own element (a vector<bool> would share words).
  std::vector<char> prepared(clients_.size(), 0);
  {
    Throttle prepares(kPreparesInFlight);
    for (size_t i : group) {
      prepares.Acquire();
      PrepareHost(i, plan, phase_id, &outcome->hosts[i],
                  [this, i, &prepared, &prepares, outcome](bool ok) {
                    prepared[i] = ok ? 1 : 0;
                    const std::string& error = outcome->hosts[i].error;
                    if (!ok) {
                      if (monitor_) monitor_->SetPhase(i, "");
                      if (!error.starts_with("not run: ") && !error.starts_with("interrupted")) {
                        HostFailed(i, error);
                      }
                    }
                    prepares.Release();
                  });
    }
  }

  // 2. The clocks again, right after the barrier: a Prepare may have taken minutes, and the
  // start instant is sent with these offsets. Their time is the fan-out the lead must cover.
  const int64_t synced_from = clock_.NowUnixNanos();
  {
    Throttle syncs(kBarrierSyncsInFlight);
    for (size_t i : group) {
      if (!prepared[i]) continue;
      syncs.Acquire();
      clients_[i]->SyncClockAsync(kBarrierSyncRounds, [this, i, &syncs, outcome](const Status&) {
        // A re-sync that failed (at 10,000 hosts on 2 cores, exchanges time out queued in
        // the controller) keeps the estimate from before, which the end-of-phase sync then
        // brackets: the host runs, and its uncertainty says how good the clock was.
        outcome->hosts[i].clock = clients_[i]->clock();
        syncs.Release();
      });
    }
  }
  const int64_t fan_out = (clock_.NowUnixNanos() - synced_from) / kBarrierSyncRounds;

  // 3. One start instant for all: ahead of the slowest round trip, and of the time it takes to
  // reach every host, as the syncs just measured.
  int64_t max_rtt = 0;
  for (size_t i : group) {
    if (prepared[i]) max_rtt = std::max(max_rtt, clients_[i]->clock().rtt_nanos);
  }
  const int64_t lead = kMinStartLeadNanos + 4 * max_rtt + 2 * fan_out + learned_lead_nanos_;
  const int64_t start_at = clock_.NowUnixNanos() + lead;
  if (outcome->start_at_unix_nanos == 0) {
    outcome->start_at_unix_nanos = start_at;
    outcome->start_lead_nanos = lead;
  }

  // 4. Run everywhere, then clean up.
  {
    Throttle runs(kUnbounded);
    for (size_t i : group) {
      HostOutcome* host = &outcome->hosts[i];
      if (!prepared[i]) continue;
      runs.Acquire();
      RunHost(i, plan, phase_id, start_at, progress, host, [&runs] { runs.Release(); });
    }
  }

  // Run calls that reached their agents after the instant: give later phases more lead.
  int64_t latest = 0;
  for (size_t i : group) {
    const auto& result = outcome->hosts[i].result;
    if (result) latest = std::max(latest, result->start_late_nanos());
  }
  if (latest > 1'000'000) {
    learned_lead_nanos_ = std::min(kMaxLearnedLeadNanos, std::max(learned_lead_nanos_, 2 * latest));
  }
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
