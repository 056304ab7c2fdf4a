#include "tests/agent/devices/aoe/fake_aoe_server.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace stormark::agent::aoe {

class FakeAoeServer::Link final : public FrameLink {
 public:
  Link(FakeAoeServer& target, std::optional<uint8_t> session, Mac mac)
      : target_(target), session_(session), mac_(mac) {}

  const Mac& mac() const override { return mac_; }
  uint32_t mtu() const override { return target_.config_.mtu; }

  common::Status Send(std::span<const TxFrame> frames) override {
    std::lock_guard<std::mutex> lock(target_.mu_);
    for (const TxFrame& f : frames) {
      std::vector<uint8_t> bytes(f.head.begin(), f.head.end());
      bytes.insert(bytes.end(), f.payload.begin(), f.payload.end());
      target_.HandleLocked(this, bytes);
    }
    return absl::OkStatus();
  }

  common::StatusOr<size_t> Receive(std::span<RxFrame> frames, int64_t timeout_nanos) override {
    std::unique_lock<std::mutex> lock(target_.mu_);
    if (inbox_.empty() && timeout_nanos > 0) {
      target_.arrived_.wait_for(lock, std::chrono::nanoseconds(timeout_nanos),
                                [&] { return !inbox_.empty(); });
    }
    size_t n = 0;
    while (n < frames.size() && !inbox_.empty()) {
      auto& [bytes, counts] = inbox_.front();
      const size_t len = std::min(bytes.size(), frames[n].buffer.size());
      std::memcpy(frames[n].buffer.data(), bytes.data(), len);
      frames[n].length = len;
      if (counts && target_.in_flight_ > 0) --target_.in_flight_;
      inbox_.pop_front();
      ++n;
    }
    return n;
  }

  // Requires target_.mu_.
  void Push(std::vector<uint8_t> reply, bool counts) {
    if (session_ && reply.size() > kTagOffset && reply[kTagOffset] != *session_) return;
    inbox_.emplace_back(std::move(reply), counts);
  }

 private:
  FakeAoeServer& target_;
  const std::optional<uint8_t> session_;
  const Mac mac_;
  std::deque<std::pair<std::vector<uint8_t>, bool>> inbox_;  // Guarded by target_.mu_.
};

FakeAoeServer::FakeAoeServer(Config config) : config_(config), data_(config.sectors * kSectorSize) {
  for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<uint8_t>(i * 7 + i / 512);
}

LinkFactory FakeAoeServer::Factory() {
  return [this](std::optional<uint8_t> session) -> common::StatusOr<std::unique_ptr<FrameLink>> {
    return std::unique_ptr<FrameLink>(new Link(*this, session, Mac{0x02, 0, 0, 0, 0x11, 0x22}));
  };
}

void FakeAoeServer::DropEvery(uint32_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  drop_every_ = n;
}

void FakeAoeServer::DuplicateEvery(uint32_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  duplicate_every_ = n;
}

void FakeAoeServer::HoldReplies(uint32_t n, bool until_resent) {
  std::lock_guard<std::mutex> lock(mu_);
  hold_ = n;
  hold_until_resent_ = until_resent;
}

void FakeAoeServer::ReleaseHeld() {
  std::lock_guard<std::mutex> lock(mu_);
  while (!held_.empty()) {
    held_.front().link->Push(std::move(held_.front().reply), false);
    held_.pop_front();
  }
  arrived_.notify_all();
}

void FakeAoeServer::FailLba(uint64_t lba, uint8_t status, uint8_t error) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_lba_ = lba;
  fail_status_ = status;
  fail_error_ = error;
}

void FakeAoeServer::AoeError(uint8_t code) {
  std::lock_guard<std::mutex> lock(mu_);
  aoe_error_ = code;
}

void FakeAoeServer::Silence() {
  std::lock_guard<std::mutex> lock(mu_);
  silent_ = true;
}

std::string FakeAoeServer::Contents(uint64_t offset, size_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::string(reinterpret_cast<const char*>(data_.data()) + offset, n);
}

void FakeAoeServer::Fill(uint64_t offset, const std::string& bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  std::memcpy(data_.data() + offset, bytes.data(), bytes.size());
}

uint32_t FakeAoeServer::max_in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_in_flight_;
}

std::vector<uint8_t> FakeAoeServer::commands() const {
  std::lock_guard<std::mutex> lock(mu_);
  return commands_;
}

void FakeAoeServer::DeliverLocked(Link* link, std::vector<uint8_t> reply) {
  ++replies_;
  const bool twice = duplicate_every_ != 0 && replies_ % duplicate_every_ == 0;
  if (twice) link->Push(reply, false);
  link->Push(std::move(reply), true);
  arrived_.notify_all();
}

void FakeAoeServer::HandleLocked(Link* link, std::span<const uint8_t> frame) {
  Header h;
  if (silent_ || !ParseHeader(frame, &h) || (h.flags & kFlagResponse)) return;
  if ((h.shelf != config_.shelf && h.shelf != kAnyShelf) ||
      (h.slot != config_.slot && h.slot != kAnySlot)) {
    return;
  }
  Header rh = h;
  rh.dst = h.src;
  rh.src = mac_;
  rh.shelf = config_.shelf;
  rh.slot = config_.slot;
  rh.flags = kFlagResponse;
  if (h.command == kCommandQueryConfig) {
    std::vector<uint8_t> reply(kConfigHeaderSize);
    EncodeQueryConfig(rh, std::span<uint8_t, kConfigHeaderSize>(reply));
    reply[24] = static_cast<uint8_t>(config_.buffer_count >> 8);
    reply[25] = static_cast<uint8_t>(config_.buffer_count);
    reply[26] = 0x40;  // firmware 0x4019
    reply[27] = 0x19;
    reply[28] = config_.max_sectors;
    reply[29] = 0x10;
    link->Push(std::move(reply), false);
    arrived_.notify_all();
    return;
  }
  if (h.command != kCommandAta) return;
  AtaArg ata;
  if (!ParseAta(frame, &ata)) return;
  ++requests_;
  if (drop_every_ != 0 && requests_ % drop_every_ == 0) return;
  commands_.push_back(ata.cmd_status);
  in_flight_++;
  max_in_flight_ = std::max(max_in_flight_, in_flight_);

  // A retransmission releases the held reply of its frame first: it arrives late.
  bool resent = false;
  for (auto it = held_.begin(); it != held_.end(); ++it) {
    if (it->until_resent && it->link == link && it->lba == ata.lba &&
        it->command == ata.cmd_status) {
      link->Push(std::move(it->reply), false);
      held_.erase(it);
      resent = true;
      break;
    }
  }

  AtaArg out = ata;
  out.cmd_status = 0x40;  // DRDY
  out.err_feature = 0;
  std::vector<uint8_t> data;
  if (aoe_error_ != 0) {
    rh.flags |= kFlagError;
    rh.error = aoe_error_;
  } else if (ata.cmd_status == kAtaIdentify) {
    data.assign(512, 0);
    auto word = [&](int w, uint16_t v) {
      data[2 * w] = static_cast<uint8_t>(v);
      data[2 * w + 1] = static_cast<uint8_t>(v >> 8);
    };
    word(83, 0x4400);  // LBA48 supported
    for (int w = 0; w < 4; ++w) word(100 + w, static_cast<uint16_t>(config_.sectors >> (16 * w)));
    const std::string model = "Fake AoE target ";  // words 27-46, two characters a word
    for (size_t i = 0; i + 1 < model.size(); i += 2) {
      data[54 + i] = static_cast<uint8_t>(model[i + 1]);
      data[54 + i + 1] = static_cast<uint8_t>(model[i]);
    }
    out.sector_count = 0;
  } else if (ata.cmd_status == kAtaReadExt || ata.cmd_status == kAtaWriteExt) {
    const uint64_t n = ata.sector_count;
    if (ata.lba <= fail_lba_ && fail_lba_ < ata.lba + n) {
      out.cmd_status = fail_status_;
      out.err_feature = fail_error_;
    } else if (n > config_.max_sectors) {
      rh.flags |= kFlagError;
      rh.error = 2;
    } else if (ata.lba + n > config_.sectors) {
      out.cmd_status = 0x41;
      out.err_feature = 0x10;
    } else if (ata.cmd_status == kAtaReadExt) {
      data.assign(data_.begin() + ata.lba * kSectorSize,
                  data_.begin() + (ata.lba + n) * kSectorSize);
      out.sector_count = 0;
    } else {
      if (frame.size() < kAtaHeaderSize + n * kSectorSize) {
        rh.flags |= kFlagError;
        rh.error = 2;
      } else {
        std::memcpy(data_.data() + ata.lba * kSectorSize, frame.data() + kAtaHeaderSize,
                    n * kSectorSize);
        out.sector_count = 0;
      }
    }
  } else if (ata.cmd_status != kAtaFlushCache) {
    out.cmd_status = 0x41;  // DRDY ERR, ABRT
    out.err_feature = 0x04;
  }
  std::vector<uint8_t> reply(kAtaHeaderSize);
  EncodeAta(rh, out, std::span<uint8_t, kAtaHeaderSize>(reply));
  reply.insert(reply.end(), data.begin(), data.end());
  if (hold_ > 0 && !resent) {
    --hold_;
    --in_flight_;
    held_.push_back({link, std::move(reply), ata.lba, ata.cmd_status, hold_until_resent_});
    return;
  }
  DeliverLocked(link, std::move(reply));
}

}  // namespace stormark::agent::aoe
