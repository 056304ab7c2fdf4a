#include "agent/devices/aoe/packet_link.h"

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/strings.h"

namespace stormark::agent::aoe {
namespace {

// Most frames moved by one sendmmsg or recvmmsg.
constexpr size_t kBatch = 64;
// Socket buffers: room for hundreds of jumbo frames, so that a burst of replies is not lost.
constexpr int kSocketBuffer = 8 << 20;

common::Status AttachFilter(int fd, std::optional<uint8_t> session) {
  // Accept a frame if its flags byte has the response bit and, for a session, the first byte
  // of its tag is the session's. Jump offsets count from the next instruction.
  std::vector<sock_filter> code;
  if (session) {
    code = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kFlagResponse, 0, 2),  // no: drop
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, kTagOffset),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, *session, 1, 0),  // yes: accept
        BPF_STMT(BPF_RET | BPF_K, 0),
        BPF_STMT(BPF_RET | BPF_K, 0x40000),
    };
  } else {
    code = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kFlagResponse, 1, 0),  // yes: accept
        BPF_STMT(BPF_RET | BPF_K, 0),
        BPF_STMT(BPF_RET | BPF_K, 0x40000),
    };
  }
  sock_fprog program{static_cast<unsigned short>(code.size()), code.data()};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof(program)) != 0) {
    return common::ErrnoError("AoE: cannot attach the socket filter", errno);
  }
  return absl::OkStatus();
}

void SetBuffer(int fd, int force_option, int option) {
  const int size = kSocketBuffer;
  if (setsockopt(fd, SOL_SOCKET, force_option, &size, sizeof(size)) != 0) {
    setsockopt(fd, SOL_SOCKET, option, &size, sizeof(size));
  }
}

}  // namespace

common::StatusOr<std::unique_ptr<PacketLink>> PacketLink::Open(const std::string& interface,
                                                               std::optional<uint8_t> session) {
  if (interface.empty() || interface.size() >= IFNAMSIZ) {
    return absl::InvalidArgumentError(
        common::StrCat("AoE: '", interface, "' is not a network interface name"));
  }
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(kEtherType));
  if (fd < 0) {
    const int err = errno;
    return common::ErrnoError(err == EPERM ? "AoE: opening a raw socket needs root or CAP_NET_RAW"
                                           : "AoE: cannot open a raw socket",
                              err);
  }
  auto fail = [&](const std::string& what) {
    const int err = errno;
    close(fd);
    return common::ErrnoError(common::StrCat("AoE on ", interface, ": ", what), err);
  };
  ifreq req{};
  std::memcpy(req.ifr_name, interface.c_str(), interface.size());
  if (ioctl(fd, SIOCGIFINDEX, &req) != 0) return fail("no such interface");
  const int ifindex = req.ifr_ifindex;
  if (ioctl(fd, SIOCGIFHWADDR, &req) != 0) return fail("cannot read its MAC address");
  Mac mac;
  std::memcpy(mac.data(), req.ifr_hwaddr.sa_data, mac.size());
  if (ioctl(fd, SIOCGIFMTU, &req) != 0) return fail("cannot read its MTU");
  const uint32_t mtu = static_cast<uint32_t>(req.ifr_mtu);
  if (ioctl(fd, SIOCGIFFLAGS, &req) == 0 && !(req.ifr_flags & IFF_UP)) {
    errno = ENETDOWN;
    return fail("the interface is down");
  }

  // Frames this host sends itself (other queues' requests) are of no interest.
  const int one = 1;
  setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
  SetBuffer(fd, SO_RCVBUFFORCE, SO_RCVBUF);
  SetBuffer(fd, SO_SNDBUFFORCE, SO_SNDBUF);
  common::Status filtered = AttachFilter(fd, session);
  if (!filtered.ok()) {
    close(fd);
    return filtered;
  }
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(kEtherType);
  addr.sll_ifindex = ifindex;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return fail("bind");
  return std::unique_ptr<PacketLink>(new PacketLink(fd, interface, ifindex, mac, mtu));
}

PacketLink::PacketLink(int fd, std::string interface, int ifindex, Mac mac, uint32_t mtu)
    : fd_(fd), interface_(std::move(interface)), ifindex_(ifindex), mac_(mac), mtu_(mtu) {}

PacketLink::~PacketLink() { close(fd_); }

common::Status PacketLink::Send(std::span<const TxFrame> frames) {
  while (!frames.empty()) {
    const size_t n = std::min(frames.size(), kBatch);
    iovec iov[kBatch][2];
    mmsghdr msgs[kBatch];
    std::memset(msgs, 0, sizeof(mmsghdr) * n);
    for (size_t i = 0; i < n; ++i) {
      iov[i][0] = {const_cast<uint8_t*>(frames[i].head.data()), frames[i].head.size()};
      iov[i][1] = {const_cast<uint8_t*>(frames[i].payload.data()), frames[i].payload.size()};
      msgs[i].msg_hdr.msg_iov = iov[i];
      msgs[i].msg_hdr.msg_iovlen = frames[i].payload.empty() ? 1 : 2;
    }
    const int sent = sendmmsg(fd_, msgs, static_cast<unsigned>(n), 0);
    if (sent < 0) {
      if (errno == EINTR) continue;
      // A full transmit queue drops the frame, as the wire would: retransmission recovers.
      if (errno == ENOBUFS || errno == EAGAIN) return absl::OkStatus();
      return common::ErrnoError(common::StrCat("AoE: send on ", interface_), errno);
    }
    frames = frames.subspan(static_cast<size_t>(std::max(sent, 1)));
  }
  return absl::OkStatus();
}

common::StatusOr<size_t> PacketLink::Receive(std::span<RxFrame> frames, int64_t timeout_nanos) {
  const size_t n = std::min(frames.size(), kBatch);
  iovec iov[kBatch];
  mmsghdr msgs[kBatch];
  std::memset(msgs, 0, sizeof(mmsghdr) * n);
  for (size_t i = 0; i < n; ++i) {
    iov[i] = {frames[i].buffer.data(), frames[i].buffer.size()};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  for (bool waited = false;;) {
    const int got = recvmmsg(fd_, msgs, static_cast<unsigned>(n), MSG_DONTWAIT, nullptr);
    if (got > 0) {
      for (int i = 0; i < got; ++i) frames[i].length = msgs[i].msg_len;
      return static_cast<size_t>(got);
    }
    if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      return common::ErrnoError(common::StrCat("AoE: receive on ", interface_), errno);
    }
    if (waited || timeout_nanos <= 0) return 0;
    pollfd pfd{fd_, POLLIN, 0};
    const timespec ts{timeout_nanos / 1'000'000'000, timeout_nanos % 1'000'000'000};
    const int ready = ppoll(&pfd, 1, &ts, nullptr);
    if (ready < 0 && errno != EINTR) {
      return common::ErrnoError(common::StrCat("AoE: poll on ", interface_), errno);
    }
    if (ready > 0 && (pfd.revents & (POLLERR | POLLNVAL))) {
      return absl::UnavailableError(common::StrCat("AoE: the socket on ", interface_,
                                                   " failed (did the interface go away?)"));
    }
    waited = true;
  }
}

uint64_t PacketLink::TakeDrops() {
  tpacket_stats stats{};
  socklen_t len = sizeof(stats);
  // Reading the statistics resets them.
  if (getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &stats, &len) != 0) return 0;
  return stats.tp_drops;
}

LinkFactory PacketLinkFactory(const std::string& interface) {
  return
      [interface](std::optional<uint8_t> session) -> common::StatusOr<std::unique_ptr<FrameLink>> {
        ASSIGN_OR_RETURN(auto link, PacketLink::Open(interface, session));
        return std::unique_ptr<FrameLink>(std::move(link));
      };
}

}  // namespace stormark::agent::aoe
