// What one AoE server is (AoeServerParams, found by discovery) and the state that every queue
// of one device shares about it (AoeServer): the server's buffer credits, the RTT estimator,
// the counters reported as device stats, and whether the server has been given up on.
// The AoE specification and vblade call this end a "target"; the code says server, so that
// "target" keeps the one meaning it has everywhere else: an entry of the agent's config.
#ifndef STORMARK_AGENT_DEVICES_AOE_AOE_SERVER_H_
#define STORMARK_AGENT_DEVICES_AOE_AOE_SERVER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/devices/aoe/aoe_address.h"
#include "agent/devices/aoe/aoe_frame.h"
#include "agent/devices/aoe/rtt_estimator.h"
#include "agent/devices/device.h"
#include "common/clock.h"

namespace stormark::agent::aoe {

// Timers of the initiator, and the phase's cancel flag.
struct AoeOptions {
  // The retransmission timeout before the first RTT sample, and its bounds. The floor is far
  // above a LAN's RTT on purpose: a busy target (or a busy initiator host) stalls for
  // milliseconds, and a retransmission then only adds to its load.
  int64_t initial_rto_nanos = 50'000'000;
  int64_t min_rto_nanos = 20'000'000;
  int64_t max_rto_nanos = 1'000'000'000;
  // A frame unanswered this long after its first transmission fails its request; when the
  // target has not answered anything for this long, it is given up on (every request fails).
  int64_t request_timeout_nanos = 10'000'000'000;
  // Discovery (Query Config and IDENTIFY) gives up after this long.
  int64_t discovery_timeout_nanos = 2'000'000'000;
  // Set when the phase is cancelled: waits end within kCancelSliceNanos, and requests still
  // in flight are abandoned rather than waited for. May be null; must outlive the device.
  const std::atomic<bool>* cancelled = nullptr;

  bool is_cancelled() const {
    return cancelled != nullptr && cancelled->load(std::memory_order_relaxed);
  }
};

// The longest single wait of a queue, so that a cancelled phase is noticed soon.
inline constexpr int64_t kCancelSliceNanos = 100'000'000;

struct AoeServerParams {
  AoeAddress address;
  Mac mac{};                       // the target's
  uint16_t firmware = 0;           // from Query Config
  uint16_t buffer_count = 0;       // frames the target buffers; more in flight are dropped
  uint8_t max_sectors = 0;         // the target's limit per ATA command
  uint32_t sectors_per_frame = 0;  // min(max_sectors, what the local MTU carries)
  uint32_t mtu = 0;                // of the local interface
  std::string config;              // the target's config string
  IdentifyData identify;           // capacity, model, serial, firmware revision

  // "user-space AoE initiator on veth0, shelf 1 slot 0, firmware 0x4019, 16 buffers,
  // 2 sectors/frame".
  std::string Describe() const;
};

class AoeServer {
 public:
  // `clock` must outlive the target.
  AoeServer(AoeServerParams params, AoeOptions options, const common::Clock& clock);

  const AoeServerParams& params() const { return params_; }
  const AoeOptions& options() const { return options_; }
  const common::Clock& clock() const { return clock_; }
  RttEstimator& rtt() { return rtt_; }

  // Takes one of the target's buffers for a frame in flight; false when all are taken.
  bool TakeCredit();
  void ReturnCredits(uint32_t n);

  // A valid reply came from the target at `now` (monotonic).
  void Heard(int64_t now) { last_heard_.store(now, std::memory_order_relaxed); }
  int64_t last_heard() const { return last_heard_.load(std::memory_order_relaxed); }

  // Gives up on the target: from now on every request fails with `why`.
  void MarkLost(const std::string& why);
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  std::string lost_reason() const;

  // A new session byte for a queue (the first byte of its tags).
  uint8_t NextSessionId() { return static_cast<uint8_t>(next_session_.fetch_add(1)); }

  // Keeps the reason a request failed, for Device::RequestError; a few are kept.
  void NoteFailure(const IoRequest& request, std::string detail);
  std::string FailureDetail(const IoRequest& request) const;

  // Counters, updated by the queues.
  std::atomic<uint64_t> frames{0};         // frames sent for the first time
  std::atomic<uint64_t> retransmits{0};    // frames sent again after their timer expired
  std::atomic<uint64_t> timeouts{0};       // frames given up on (their request failed)
  std::atomic<uint64_t> late_replies{0};   // replies to an earlier attempt of a frame in flight
  std::atomic<uint64_t> stale_replies{0};  // replies to no frame in flight (duplicates, too late)
  std::atomic<uint64_t> errors{0};         // AoE or ATA errors reported by the target
  std::atomic<uint64_t> socket_drops{0};   // replies lost in this host's full socket buffers

  // The counters and the RTT estimate, as PhaseResult.device_stats: "aoe.retransmits" -> "12".
  std::map<std::string, std::string> Stats() const;

 private:
  struct Failure {
    IoOp op;
    uint64_t offset;
    uint32_t length;
    std::string detail;
  };

  const AoeServerParams params_;
  const AoeOptions options_;
  const common::Clock& clock_;
  RttEstimator rtt_;
  std::atomic<int64_t> credits_;
  std::atomic<int64_t> last_heard_;
  std::atomic<uint32_t> next_session_;
  std::atomic<bool> lost_{false};
  mutable absl::Mutex mu_;
  std::string lost_reason_ ABSL_GUARDED_BY(mu_);
  std::deque<Failure> failures_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stormark::agent::aoe

#endif  // STORMARK_AGENT_DEVICES_AOE_AOE_SERVER_H_
