#include "bench/fleet_sim/run_stream.h"

#include <time.h>

#include <algorithm>

namespace stormark::fleet_sim {
namespace {

int64_t Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

RunStream::RunStream(SimAgent& agent, std::shared_ptr<const PhaseShape> shape,
                     int64_t start_at_unix_nanos, TimerQueue& timers, PhaseLog& log)
    : agent_(agent),
      shape_(std::move(shape)),
      timers_(timers),
      log_(log),
      start_at_(start_at_unix_nanos == 0 ? 0 : start_at_unix_nanos - agent.clock_offset_nanos()) {}

void RunStream::Start() {
  const int64_t now = Now(CLOCK_REALTIME);
  int64_t start_at = 0;
  {
    absl::MutexLock lock(&mu_);
    received_ = now;
    start_at = start_at_;
    if (start_at == 0) {
      armed_.mutable_armed()->set_armed_unix_nanos(now + agent_.clock_offset_nanos());
      write_in_flight_ = true;
    } else {
      timer_pending_ = true;
    }
  }
  if (start_at == 0) {
    armed_run_ = std::make_shared<ArmedRun>();
    {
      absl::MutexLock lock(&armed_run_->mu);
      armed_run_->stream = this;
    }
    agent_.Arm(armed_run_);
    StartWrite(&armed_);
    return;
  }
  log_.RunReceived(shape_->phase_id, now, start_at);
  timers_.At(start_at, [this] { Wake(); });
}

bool RunStream::StartAt(int64_t start_at_unix_nanos) {
  const int64_t now = Now(CLOCK_REALTIME);
  int64_t start_at = 0;
  {
    absl::MutexLock lock(&mu_);
    if (start_at_ != 0 || finish_called_ || cancelled_ || done_) return false;
    start_at = start_at_ = start_at_unix_nanos - agent_.clock_offset_nanos();
    received_ = now;
    timer_pending_ = true;
  }
  log_.RunReceived(shape_->phase_id, now, start_at);
  timers_.At(start_at, [this] { Wake(); });
  return true;
}

int64_t RunStream::NextEvent() const {
  return std::min(next_progress_, started_ + shape_->duration_nanos);
}

void RunStream::Wake() {
  Act act = Act::kNothing;
  int64_t next = 0, timer_late = 0;
  {
    absl::MutexLock lock(&mu_);
    timer_pending_ = false;
    if (done_) {
      act = Act::kDelete;
    } else if (!finish_called_ && !cancelled_) {
      started_ = Now(CLOCK_REALTIME);
      started_mono_ = Now(CLOCK_MONOTONIC);
      timer_late = started_ - std::max(start_at_, received_);
      next_progress_ = started_ + shape_->progress_interval_nanos;
      next = NextEvent();
      timer_pending_ = true;
    }
  }
  if (next != 0) {
    log_.Woken(shape_->phase_id, timer_late);
    timers_.At(next, [this] { Tick(); });
  }
  Do(act);
}

void RunStream::Tick() {
  Act act = Act::kNothing;
  int64_t next = 0, result_late = -1;
  {
    absl::MutexLock lock(&mu_);
    timer_pending_ = false;
    if (done_) {
      act = Act::kDelete;
    } else if (!finish_called_ && !cancelled_) {
      const int64_t now = Now(CLOCK_REALTIME);
      const int64_t elapsed = Now(CLOCK_MONOTONIC) - started_mono_;
      const int64_t end = started_ + shape_->duration_nanos;
      if (now >= end) {
        // The timed region ends on time, as a real agent's workers stop on time; how late this
        // process got round to it (a burst of thousands of streams ending at one instant) is
        // its own lag, logged, not the agent's figure.
        result_late = now - end;
        const int64_t offset = agent_.clock_offset_nanos();
        *result_.mutable_result() = ResultOf(*shape_, started_ + offset, end + offset,
                                             shape_->duration_nanos, started_ - start_at_);
        Tell(agent_.lie(), result_.mutable_result());
        if (write_in_flight_) {
          result_waiting_ = true;  // OnWriteDone sends it.
        } else {
          write_in_flight_ = finish_called_ = true;
          act = Act::kWriteAndFinish;
        }
      } else {
        // A progress write still in flight (a slow reader) skips this one.
        if (!write_in_flight_) {
          *progress_.mutable_progress() = ProgressAt(*shape_, elapsed);
          Tell(agent_.lie(), progress_.mutable_progress());
          write_in_flight_ = true;
          act = Act::kWrite;
        }
        while (next_progress_ <= now) next_progress_ += shape_->progress_interval_nanos;
        next = NextEvent();
        timer_pending_ = true;
      }
    }
  }
  if (result_late >= 0) log_.Ended(shape_->phase_id, result_late);
  if (next != 0) timers_.At(next, [this] { Tick(); });
  Do(act);
}

void RunStream::OnWriteDone(bool ok) {
  Act act = Act::kNothing;
  {
    absl::MutexLock lock(&mu_);
    write_in_flight_ = false;
    if (finish_called_) {
      // The final write's own completion: nothing follows it.
    } else if (!ok || cancelled_) {
      finish_called_ = true;
      act = Act::kFinishCancelled;
    } else if (result_waiting_) {
      result_waiting_ = false;
      write_in_flight_ = finish_called_ = true;
      act = Act::kWriteAndFinish;
    }
  }
  Do(act);
}

void RunStream::OnCancel() {
  Act act = Act::kNothing;
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (!write_in_flight_ && !finish_called_) {
      finish_called_ = true;
      act = Act::kFinishCancelled;
    }
  }
  Do(act);
}

void RunStream::OnDone() {
  if (armed_run_) {
    absl::MutexLock lock(&armed_run_->mu);
    armed_run_->stream = nullptr;
  }
  Act act = Act::kNothing;
  {
    absl::MutexLock lock(&mu_);
    done_ = true;
    if (!timer_pending_) act = Act::kDelete;
  }
  Do(act);
}

void RunStream::Do(Act act) {
  switch (act) {
    case Act::kNothing:
      break;
    case Act::kWrite:
      StartWrite(&progress_);
      break;
    case Act::kWriteAndFinish:
      StartWriteAndFinish(&result_, grpc::WriteOptions(), grpc::Status::OK);
      break;
    case Act::kFinishCancelled:
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the Run call was cancelled"));
      break;
    case Act::kDelete:
      delete this;
      break;
  }
}

}  // namespace stormark::fleet_sim
