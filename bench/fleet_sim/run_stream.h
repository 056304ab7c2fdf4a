// One simulated Run stream: it waits on the shared timer queue for its start instant, sends
// progress every progress interval, and after the phase's duration one final update with the
// result, as a real agent's Run does. No thread is held while it waits.
//
// gRPC calls the reactions (OnWriteDone, OnCancel, OnDone) on its own threads, the timer queue
// calls Wake and Tick on its thread: every decision is taken under mu_, and every gRPC call
// (StartWrite, Finish, StartWriteAndFinish) is made after mu_ is released, since gRPC may run a
// reaction inline. At most one write is in flight; Finish waits for it. The stream owns itself
// and is deleted once gRPC is done with it (OnDone) and no timer still names it.
//
// An armed Run (RunRequest.await_start) writes RunUpdate.armed and waits, with no timer, until
// a Start gives it its instant (StartAt).
//
// An Abort does not stop the stream (the simulator keeps no link from an agent to its stream):
// it ends with its result as planned. A cancelled call (the controller gone, or giving up on
// the host) ends at once.
#ifndef STORMARK_BENCH_FLEET_SIM_RUN_STREAM_H_
#define STORMARK_BENCH_FLEET_SIM_RUN_STREAM_H_

#include <cstdint>
#include <memory>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "bench/fleet_sim/phase_log.h"
#include "bench/fleet_sim/phase_shape.h"
#include "bench/fleet_sim/sim_fleet.h"
#include "bench/fleet_sim/timer_queue.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::fleet_sim {

class RunStream final : public grpc::ServerWriteReactor<stormark::v1::RunUpdate> {
 public:
  // The phase `shape` on `agent`, to start at `start_at_unix_nanos` on the agent's clock, or,
  // when it is 0, armed in `armed` for a Start. Start() puts it on `timers`, or arms it;
  // `agent`, `timers` and `log` outlive the stream.
  RunStream(SimAgent& agent, std::shared_ptr<const PhaseShape> shape, int64_t start_at_unix_nanos,
            TimerQueue& timers, PhaseLog& log);
  void Start() ABSL_LOCKS_EXCLUDED(mu_);
  // The Start of an armed stream: false if it is not armed (started already, or over). Called
  // with the ArmedRun's mutex held, which keeps the stream alive.
  bool StartAt(int64_t start_at_unix_nanos) ABSL_LOCKS_EXCLUDED(mu_);

  void OnWriteDone(bool ok) override ABSL_LOCKS_EXCLUDED(mu_);
  void OnCancel() override ABSL_LOCKS_EXCLUDED(mu_);
  void OnDone() override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // What to do once mu_ is released.
  enum class Act { kNothing, kDelete, kWrite, kWriteAndFinish, kFinishCancelled };

  // Timer callbacks: the start instant; a progress or the end instant.
  void Wake() ABSL_LOCKS_EXCLUDED(mu_);
  void Tick() ABSL_LOCKS_EXCLUDED(mu_);
  // The next progress or end instant, on the process's clock.
  int64_t NextEvent() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Acts on what was decided; the last thing a reaction does, as it may delete the stream.
  void Do(Act act);

  SimAgent& agent_;
  const std::shared_ptr<const PhaseShape> shape_;
  TimerQueue& timers_;
  PhaseLog& log_;
  // Set while armed; cleared when gRPC is done with the stream.
  std::shared_ptr<ArmedRun> armed_run_;

  absl::Mutex mu_;
  // The start instant on this process's clock (the agent's less its offset); 0 while armed.
  int64_t start_at_ ABSL_GUARDED_BY(mu_);
  int64_t received_ ABSL_GUARDED_BY(mu_) = 0;  // When the Run arrived, this process's clock.
  bool timer_pending_ ABSL_GUARDED_BY(mu_) = false;
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool result_waiting_ ABSL_GUARDED_BY(mu_) = false;  // Sent when the write in flight is done.
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  // The timed region, on this process's clocks, once woken.
  int64_t started_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t started_mono_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t next_progress_ ABSL_GUARDED_BY(mu_) = 0;
  // Given to gRPC by StartWrite: untouched while a write is in flight.
  stormark::v1::RunUpdate progress_;
  stormark::v1::RunUpdate result_;
  stormark::v1::RunUpdate armed_;
};

// A Run refused before it starts: finishes with `status` at once.
class RefusedRun final : public grpc::ServerWriteReactor<stormark::v1::RunUpdate> {
 public:
  explicit RefusedRun(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace stormark::fleet_sim

#endif  // STORMARK_BENCH_FLEET_SIM_RUN_STREAM_H_
