// Where an AoE initiator's Ethernet frames go: the seam between the protocol (tags,
// retransmission) and the network. PacketLink is the real one (an AF_PACKET socket); tests
// inject an in-process target behind this interface, so drops, duplicates and late replies
// can be staged exactly.
//
// A link belongs to one thread at a time; not thread-safe.
#ifndef STORMARK_AGENT_DEVICES_AOE_FRAME_LINK_H_
#define STORMARK_AGENT_DEVICES_AOE_FRAME_LINK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include "agent/devices/aoe/aoe_frame.h"
#include "common/status.h"

namespace stormark::agent::aoe {

// One frame to send: `head` then `payload` (empty for a frame without data), concatenated.
struct TxFrame {
  std::span<const uint8_t> head;
  std::span<const uint8_t> payload;
};

// A buffer to receive one frame into; Receive sets `length`.
struct RxFrame {
  std::span<uint8_t> buffer;
  size_t length = 0;
};

class FrameLink {
 public:
  virtual ~FrameLink() = default;

  // This end's MAC address, and the interface's MTU (without the Ethernet header).
  virtual const Mac& mac() const = 0;
  virtual uint32_t mtu() const = 0;

  // Sends every frame, in order. An error means the link is unusable (the interface went
  // down); a frame lost on the way is not an error.
  virtual common::Status Send(std::span<const TxFrame> frames) = 0;

  // Receives up to frames.size() AoE responses, waiting at most `timeout_nanos` (0: do not
  // wait) for the first one. Returns how many arrived.
  virtual common::StatusOr<size_t> Receive(std::span<RxFrame> frames, int64_t timeout_nanos) = 0;

  // Frames the link itself dropped (a full receive buffer) since the last call.
  virtual uint64_t TakeDrops() { return 0; }
};

// Opens a link to the interface of a target. With `session`, the link receives only the
// responses whose tag starts with that byte (each queue owns a session byte); without, every
// AoE response on the interface (discovery).
using LinkFactory =
    std::function<common::StatusOr<std::unique_ptr<FrameLink>>(std::optional<uint8_t> session)>;

}  // namespace stormark::agent::aoe

#endif  // STORMARK_AGENT_DEVICES_AOE_FRAME_LINK_H_
