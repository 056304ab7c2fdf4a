// One host's path through a phase, step by step on its calls' callbacks: Prepare, Run, the
// result with the fleet's own reasons first, and cleanup. RunGroup (fleet.cc) starts each.
#include "controller/fleet/fleet.h"

#include <algorithm>
#include <cstdint>

#include "common/strings.h"
#include "controller/fleet/packed_series.h"
#include "controller/workloads/workload_kinds.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// How long past its prepare deadline a Prepare call may still take to answer the abort.
constexpr int64_t kPrepareBackstopNanos = 60'000'000'000;
// How long removing a phase's files may take on a host (a large file on a slow disk).
constexpr int kCleanupTimeoutMs = 60'000;

}  // namespace

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
    ScheduleDeadline(i);
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
          ScheduleDeadline(i);
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
                    const ProgressFn& progress, HostOutcome* host,
                    std::function<void(bool)> on_armed, std::function<void()> done,
                    bool pack_series) {
  if (aborted_ && !plan.runs_after_halt) {
    host->error = "interrupted before the phase started";
    if (on_armed) on_armed(false);
    return CleanUpHost(i, plan, phase_id, host, std::move(done));
  }
  if (stopped_ && !plan.runs_after_halt) {
    host->error = StrCat("not run: ", stopped());
    if (on_armed) on_armed(false);
    return CleanUpHost(i, plan, phase_id, host, std::move(done));
  }
  {
    absl::MutexLock lock(&mu_);
    const WorkloadKind* kind = KindOf(plan.spec);
    running_[i] = Running{.active = true,
                          .phase_id = phase_id,
                          // An armed run's deadline counts from the instant StartHost sends.
                          .start_at = start_at == 0 ? INT64_MAX : start_at,
                          .deadline = PhaseDeadline(plan.spec, plan.deadline_nanos,
                                                    kind ? kind->expected_bytes(plan.spec) : 0),
                          .overdue = "",
                          .preparing = false,
                          .phase_name = "",
                          .prepare_started = 0,
                          .prepare_deadline = std::nullopt,
                          .arm_started = start_at == 0 ? clock_.NowUnixNanos() : 0};
    ScheduleDeadline(i);
  }
  auto on_progress = [this, i, &progress](const stormark::v1::RunUpdate::Progress& p) {
    {
      absl::MutexLock lock(&mu_);
      Running& r = running_[i];
      if (r.deadline) {
        r.deadline->Progress(p.elapsed_nanos(), p.bytes());
        // A size-bound phase's first estimate, or one that came nearer; a later one is found
        // when the timer set goes off, so that progress does not churn the heap.
        const std::optional<int64_t> due = DueAt(r);
        const std::optional<int64_t> set = deadlines_.when(i);
        if (due && (!set || *due < *set)) deadlines_.Set(i, *due);
      }
    }
    if (monitor_) monitor_->Heard(i);  // A stream that delivers is alive.
    if (progress) progress(i, p);
  };
  if (start_at != 0) {
    clients_[i]->RunAsync(phase_id, start_at, std::move(on_progress),
                          [this, i, &plan, phase_id, host, pack_series, done = std::move(done)](
                              StatusOr<stormark::v1::PhaseResult> result) mutable {
                            Finished(i, std::move(result), host, pack_series);
                            CleanUpHost(i, plan, phase_id, host, std::move(done));
                          });
    return;
  }
  // The stream's first update says it is armed; one that ends first was never armed. Both
  // come on the stream's own reactor, one after the other, so the flag needs no lock.
  auto armed = std::make_shared<bool>(false);
  clients_[i]->ArmAsync(
      phase_id,
      [this, i, armed, on_armed] {
        if (*armed) return;
        *armed = true;
        {
          absl::MutexLock lock(&mu_);
          running_[i].arm_started = 0;
          ScheduleDeadline(i);
        }
        on_armed(true);
      },
      std::move(on_progress),
      [this, i, &plan, phase_id, host, armed, on_armed, pack_series,
       done = std::move(done)](StatusOr<stormark::v1::PhaseResult> result) mutable {
        if (!*armed) {
          *armed = true;
          on_armed(false);
        }
        Finished(i, std::move(result), host, pack_series);
        CleanUpHost(i, plan, phase_id, host, std::move(done));
      });
}

void Fleet::StartHost(size_t i, const std::string& phase_id, int64_t start_at,
                      std::function<void()> done) {
  {
    absl::MutexLock lock(&mu_);
    running_[i].start_at = start_at;
    ScheduleDeadline(i);
  }
  clients_[i]->StartAsync(
      phase_id, start_at,
      [this, i, phase_id, done = std::move(done)](const Status& started, int64_t ahead) {
        if (started.ok()) {
          absl::MutexLock lock(&mu_);
          // Only a Start that came after the instant counts: the lead was too short for it.
          late_start_message_nanos_ = std::max(late_start_message_nanos_, -ahead);
        } else {
          {
            absl::MutexLock lock(&mu_);
            if (running_[i].active && running_[i].overdue.empty()) {
              running_[i].overdue = StrCat("the start did not reach host ", clients_[i]->host(),
                                           " (", started.message(), "); aborted there");
              ScheduleDeadline(i);
            }
          }
          AbortInBackground(i, phase_id);
        }
        done();
      });
}

void Fleet::Finished(size_t i, StatusOr<stormark::v1::PhaseResult> result, HostOutcome* host,
                     bool pack_series) {
  std::string overdue;
  {
    absl::MutexLock lock(&mu_);
    overdue = running_[i].overdue;
    running_[i] = Running();
    ScheduleDeadline(i);
  }
  if (!result.ok()) {
    host->error = std::string(result.status().message());
  } else {
    host->result = std::move(*result);
    if (pack_series) {
      // Until the cleanup is over and host_done takes them: a fleet's results come at once.
      host->own_series_samples = host->result->series_size();
      host->packed_series = PackSeries(&*host->result);
    }
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

}  // namespace stormark::controller
