#include "agent/devices/aoe/aoe_discovery.h"

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::agent::aoe {
namespace {

constexpr int64_t kFirstWaitNanos = 20'000'000;
constexpr int64_t kMaxWaitNanos = 500'000'000;

// Sends `request` until a response with the same tag that `accept` takes arrives, doubling
// the wait after each silent attempt. Returns the accepted frame.
common::StatusOr<std::vector<uint8_t>> Transact(FrameLink& link, std::span<const uint8_t> request,
                                                uint32_t tag,
                                                const std::function<bool(const Header&)>& accept,
                                                int64_t timeout_nanos, const common::Clock& clock,
                                                const std::string& what,
                                                const std::atomic<bool>* cancelled) {
  const int64_t start = clock.MonotonicNanos();
  const int64_t deadline = start + timeout_nanos;
  std::vector<uint8_t> buffer(link.mtu() + kEthernetHeaderSize + 64);
  int attempts = 0;
  for (int64_t wait = kFirstWaitNanos;; wait = std::min(wait * 2, kMaxWaitNanos)) {
    int64_t now = clock.MonotonicNanos();
    if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) {
      return absl::CancelledError(common::StrCat(what, ": the phase was cancelled"));
    }
    if (now >= deadline) {
      // NOT_FOUND rather than DEADLINE_EXCEEDED: the RPC did not time out, the target is
      // absent.
      return absl::NotFoundError(fmt::format("no answer to {} within {:.1f} s ({} attempts)", what,
                                             static_cast<double>(now - start) / 1e9, attempts));
    }
    const TxFrame frame{request, {}};
    RETURN_IF_ERROR(link.Send({&frame, 1}));
    ++attempts;
    const int64_t attempt_end = std::min(deadline, now + wait);
    while ((now = clock.MonotonicNanos()) < attempt_end) {
      if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) break;
      RxFrame rx{buffer, 0};
      ASSIGN_OR_RETURN(size_t got,
                       link.Receive({&rx, 1}, std::min(attempt_end - now, kCancelSliceNanos)));
      Header header;
      if (got == 0 || !ParseHeader({buffer.data(), rx.length}, &header)) continue;
      if (header.tag != tag || !(header.flags & kFlagResponse) || !accept(header)) continue;
      buffer.resize(rx.length);
      return buffer;
    }
  }
}

}  // namespace

common::StatusOr<AoeServerParams> Discover(FrameLink& link, const AoeAddress& address,
                                           int64_t timeout_nanos, const common::Clock& clock,
                                           const std::atomic<bool>* cancelled) {
  const int64_t deadline = clock.MonotonicNanos() + timeout_nanos;
  const std::string where =
      common::StrCat(DescribeAddress(address.shelf, address.slot), " on ", address.interface);
  std::mt19937 random(std::random_device{}());
  AoeServerParams params;
  params.address = address;
  params.mtu = link.mtu();

  Header header;
  header.dst = kBroadcastMac;
  header.src = link.mac();
  header.shelf = address.shelf;
  header.slot = address.slot;
  header.command = kCommandQueryConfig;
  header.tag = static_cast<uint32_t>(random());
  std::array<uint8_t, kConfigHeaderSize> query;
  EncodeQueryConfig(header, query);
  auto from_target = [&](const Header& h) {
    return h.shelf == address.shelf && h.slot == address.slot;
  };
  auto config_reply = Transact(
      link, query, header.tag,
      [&](const Header& h) { return from_target(h) && h.command == kCommandQueryConfig; },
      timeout_nanos, clock, common::StrCat("Query Config for AoE target ", where), cancelled);
  if (!config_reply.ok()) {
    if (absl::IsCancelled(config_reply.status())) return config_reply.status();
    return absl::NotFoundError(common::StrCat(
        config_reply.status().message(),
        ": is vblade (or the shelf) running, and is the interface up and on its network?"));
  }
  Header reply;
  ParseHeader(*config_reply, &reply);
  ConfigArg config;
  if (reply.flags & kFlagError) {
    return absl::FailedPreconditionError(
        common::StrCat("AoE target ", where, " refused Query Config: ", AoeErrorText(reply.error)));
  }
  if (!ParseConfig(*config_reply, &config)) {
    return absl::DataLossError(
        common::StrCat("AoE target ", where, " sent a truncated Query Config reply"));
  }
  params.mac = reply.src;
  params.firmware = config.firmware;
  params.buffer_count = std::max<uint16_t>(1, config.buffer_count);
  params.max_sectors = config.sector_count;
  params.config = config.config;
  // A target that reports no limit (sector count 0) gets the classic 2 sectors.
  const uint32_t target_limit = config.sector_count == 0 ? 2 : config.sector_count;
  params.sectors_per_frame = std::min(SectorsPerFrame(link.mtu()), target_limit);
  if (params.sectors_per_frame == 0) {
    return absl::FailedPreconditionError(common::StrCat("AoE on ", address.interface, ": MTU ",
                                                        link.mtu(), " is too small for a sector"));
  }

  header.dst = params.mac;
  header.command = kCommandAta;
  header.tag = static_cast<uint32_t>(random());
  AtaArg ata;
  ata.sector_count = 1;
  ata.cmd_status = kAtaIdentify;
  std::array<uint8_t, kAtaHeaderSize> identify;
  EncodeAta(header, ata, identify);
  auto identify_reply = Transact(
      link, identify, header.tag,
      [&](const Header& h) { return from_target(h) && h.command == kCommandAta; },
      std::max<int64_t>(deadline - clock.MonotonicNanos(), kFirstWaitNanos), clock,
      common::StrCat("IDENTIFY DEVICE for AoE target ", where), cancelled);
  if (!identify_reply.ok()) return identify_reply.status();
  ParseHeader(*identify_reply, &reply);
  if (reply.flags & kFlagError) {
    return absl::FailedPreconditionError(common::StrCat(
        "AoE target ", where, " refused IDENTIFY DEVICE: ", AoeErrorText(reply.error)));
  }
  AtaArg status;
  if (!ParseAta(*identify_reply, &status) || AtaFailed(status.cmd_status)) {
    return absl::FailedPreconditionError(common::StrCat(
        "AoE target ", where,
        " failed IDENTIFY DEVICE: ", AtaErrorText(status.cmd_status, status.err_feature)));
  }
  auto id = ParseIdentify(std::span(*identify_reply).subspan(kAtaHeaderSize));
  if (!id.ok()) return common::Annotate(id.status(), common::StrCat("AoE target ", where));
  params.identify = *id;
  return params;
}

}  // namespace stormark::agent::aoe
