// The real FrameLink: an AF_PACKET raw socket bound to one interface and to ethertype 0x88A2.
// A classic BPF filter in the kernel passes only AoE responses (and, for a session, only those
// whose tag carries its byte), so queues sharing an interface do not wake each other. Sends
// and receives go in batches (sendmmsg, recvmmsg). Needs CAP_NET_RAW.
#ifndef STORMARK_AGENT_DEVICES_AOE_PACKET_LINK_H_
#define STORMARK_AGENT_DEVICES_AOE_PACKET_LINK_H_

#include <memory>
#include <optional>
#include <string>

#include "agent/devices/aoe/frame_link.h"

namespace stormark::agent::aoe {

class PacketLink final : public FrameLink {
 public:
  // Opens the socket on `interface`. Errors name the interface and say when CAP_NET_RAW is
  // missing.
  static common::StatusOr<std::unique_ptr<PacketLink>> Open(const std::string& interface,
                                                            std::optional<uint8_t> session);
  ~PacketLink() override;

  PacketLink(const PacketLink&) = delete;
  PacketLink& operator=(const PacketLink&) = delete;

  const Mac& mac() const override { return mac_; }
  uint32_t mtu() const override { return mtu_; }
  common::Status Send(std::span<const TxFrame> frames) override;
  common::StatusOr<size_t> Receive(std::span<RxFrame> frames, int64_t timeout_nanos) override;
  // The kernel's count of frames this socket's full receive buffer dropped.
  uint64_t TakeDrops() override;

 private:
  PacketLink(int fd, std::string interface, int ifindex, Mac mac, uint32_t mtu);

  const int fd_;
  const std::string interface_;
  const int ifindex_;
  const Mac mac_;
  const uint32_t mtu_;
};

// The LinkFactory that opens PacketLinks on `interface`.
LinkFactory PacketLinkFactory(const std::string& interface);

}  // namespace stormark::agent::aoe

#endif  // STORMARK_AGENT_DEVICES_AOE_PACKET_LINK_H_
