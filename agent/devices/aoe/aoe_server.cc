#include "agent/devices/aoe/aoe_server.h"

#include <random>

#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::agent::aoe {
namespace {

constexpr size_t kFailuresKept = 32;

}  // namespace

std::string AoeServerParams::Describe() const {
  return fmt::format(
      "user-space AoE initiator on {}, shelf {} slot {}, firmware 0x{:04x}, {} buffers, {} "
      "sectors/frame",
      address.interface, address.shelf, address.slot, firmware, buffer_count, sectors_per_frame);
}

AoeServer::AoeServer(AoeServerParams params, AoeOptions options, const common::Clock& clock)
    : params_(std::move(params)),
      options_(options),
      clock_(clock),
      rtt_(options.initial_rto_nanos, options.min_rto_nanos, options.max_rto_nanos),
      credits_(std::max<int64_t>(1, params_.buffer_count)),
      last_heard_(clock.MonotonicNanos()),
      // Random, so that two agents on one interface are unlikely to use the same bytes.
      next_session_(std::random_device{}()) {}

bool AoeServer::TakeCredit() {
  int64_t have = credits_.load(std::memory_order_relaxed);
  while (have > 0) {
    if (credits_.compare_exchange_weak(have, have - 1, std::memory_order_acq_rel)) return true;
  }
  return false;
}

void AoeServer::ReturnCredits(uint32_t n) {
  if (n != 0) credits_.fetch_add(n, std::memory_order_acq_rel);
}

void AoeServer::MarkLost(const std::string& why) {
  absl::MutexLock lock(&mu_);
  if (lost_.load()) return;
  lost_reason_ = why;
  lost_.store(true, std::memory_order_release);
}

std::string AoeServer::lost_reason() const {
  absl::MutexLock lock(&mu_);
  return lost_reason_;
}

void AoeServer::NoteFailure(const IoRequest& request, std::string detail) {
  absl::MutexLock lock(&mu_);
  failures_.push_back({request.op, request.offset, request.length, std::move(detail)});
  if (failures_.size() > kFailuresKept) failures_.pop_front();
}

std::string AoeServer::FailureDetail(const IoRequest& request) const {
  absl::MutexLock lock(&mu_);
  for (auto it = failures_.rbegin(); it != failures_.rend(); ++it) {
    if (it->op == request.op && it->offset == request.offset && it->length == request.length) {
      return it->detail;
    }
  }
  return failures_.empty() ? "" : failures_.back().detail;
}

std::map<std::string, std::string> AoeServer::Stats() const {
  auto count = [](const std::atomic<uint64_t>& c) { return common::StrCat(c.load()); };
  std::map<std::string, std::string> stats = {
      {"aoe.frames", count(frames)},
      {"aoe.retransmits", count(retransmits)},
      {"aoe.timeouts", count(timeouts)},
      {"aoe.late_replies", count(late_replies)},
      {"aoe.stale_replies", count(stale_replies)},
      {"aoe.target_errors", count(errors)},
      {"aoe.socket_drops", count(socket_drops)},
      {"aoe.buffer_count", common::StrCat(params_.buffer_count)},
      {"aoe.sectors_per_frame", common::StrCat(params_.sectors_per_frame)},
  };
  if (rtt_.samples() > 0) {
    stats["aoe.srtt_us"] = fmt::format("{:.1f}", static_cast<double>(rtt_.srtt_nanos()) / 1e3);
    stats["aoe.rttvar_us"] = fmt::format("{:.1f}", static_cast<double>(rtt_.rttvar_nanos()) / 1e3);
    stats["aoe.rto_us"] = fmt::format("{:.1f}", static_cast<double>(rtt_.Timeout(1)) / 1e3);
  }
  return stats;
}

}  // namespace stormark::agent::aoe
