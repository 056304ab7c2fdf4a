// An AoE target in the test process, behind the FrameLink seam: it answers Query Config,
// IDENTIFY DEVICE, READ/WRITE SECTORS EXT and FLUSH CACHE on a memory buffer, as vblade does,
// and stages the network's misbehaviour exactly: dropped requests, duplicated replies, replies
// held back and delivered late, AoE and ATA errors, and a target that stops answering.
// Thread-safe; each link belongs to one thread, as real links do.
#ifndef STORMARK_TESTS_AGENT_DEVICES_AOE_FAKE_AOE_SERVER_H_
#define STORMARK_TESTS_AGENT_DEVICES_AOE_FAKE_AOE_SERVER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/devices/aoe/frame_link.h"

namespace stormark::agent::aoe {

class FakeAoeServer {
 public:
  struct Config {
    uint64_t sectors = 4096;
    uint16_t shelf = 1;
    uint8_t slot = 0;
    uint16_t buffer_count = 16;
    uint8_t max_sectors = 2;  // what Query Config reports
    uint32_t mtu = 1500;      // of the initiator's links
  };
  explicit FakeAoeServer(Config config);

  LinkFactory Factory();

  // Faults, counted over ATA requests (not Query Config) from now on.
  void DropEvery(uint32_t n);       // the n-th, 2n-th, ... request is lost
  void DuplicateEvery(uint32_t n);  // the n-th, 2n-th, ... reply is sent twice
  // The next `n` replies are held back; with `until_resent`, each is delivered (late) when
  // the initiator sends its frame again, just before the reply to that retransmission; else
  // they wait for ReleaseHeld().
  void HoldReplies(uint32_t n, bool until_resent);
  void ReleaseHeld();
  void FailLba(uint64_t lba, uint8_t status, uint8_t error);  // ATA error for frames at lba
  void AoeError(uint8_t code);  // every ATA request gets this AoE error (0: none)
  void Silence();               // stop answering anything

  // What the target saw and holds.
  std::string Contents(uint64_t offset, size_t n) const;
  void Fill(uint64_t offset, const std::string& bytes);
  uint32_t max_in_flight() const;
  // The ATA command of each request, in arrival order.
  std::vector<uint8_t> commands() const;

 private:
  class Link;
  struct Held {
    Link* link;
    std::vector<uint8_t> reply;
    uint64_t lba;
    uint8_t command;
    bool until_resent;
  };

  // Handles one frame from `link`, queueing replies. Requires mu_.
  void HandleLocked(Link* link, std::span<const uint8_t> frame);
  void DeliverLocked(Link* link, std::vector<uint8_t> reply);
  void Consumed();

  const Config config_;
  const Mac mac_ = {0x02, 0, 0, 0, 0xae, 0x01};
  mutable std::mutex mu_;
  std::condition_variable arrived_;
  std::vector<uint8_t> data_;                                 // Guarded by mu_.
  uint32_t drop_every_ = 0, duplicate_every_ = 0, hold_ = 0;  // Guarded by mu_.
  bool hold_until_resent_ = false, silent_ = false;           // Guarded by mu_.
  uint8_t aoe_error_ = 0;                                     // Guarded by mu_.
  uint64_t fail_lba_ = UINT64_MAX;                            // Guarded by mu_.
  uint8_t fail_status_ = 0, fail_error_ = 0;                  // Guarded by mu_.
  uint64_t requests_ = 0, replies_ = 0;                       // Guarded by mu_.
  uint32_t in_flight_ = 0, max_in_flight_ = 0;                // Guarded by mu_.
  std::vector<uint8_t> commands_;                             // Guarded by mu_.
  std::deque<Held> held_;                                     // Guarded by mu_.
};

}  // namespace stormark::agent::aoe

#endif  // STORMARK_TESTS_AGENT_DEVICES_AOE_FAKE_AOE_SERVER_H_
