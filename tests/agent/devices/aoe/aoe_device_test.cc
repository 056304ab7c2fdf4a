// The initiator (AoeDevice, AoeQueue) against FakeAoeServer: discovery, splitting, the tag
// window, retransmission, duplicate and late replies, the target's errors, and a target that
// vanishes.
#include "agent/devices/aoe/aoe_device.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/agent/devices/aoe/fake_aoe_server.h"

namespace stormark::agent::aoe {
namespace {

constexpr int64_t kMs = 1'000'000;

AoeDeviceOptions FastTimers(bool writable = true) {
  AoeDeviceOptions options;
  options.writable = writable;
  // Far above the fake's answer time, so that only staged faults draw retransmissions, even
  // on a loaded machine.
  options.timers.initial_rto_nanos = 20 * kMs;
  options.timers.min_rto_nanos = 20 * kMs;
  options.timers.max_rto_nanos = 100 * kMs;
  options.timers.request_timeout_nanos = 400 * kMs;
  options.timers.discovery_timeout_nanos = 500 * kMs;
  return options;
}

class AoeDeviceTest : public ::testing::Test {
 protected:
  void Open(FakeAoeServer::Config config = {}, AoeDeviceOptions options = FastTimers()) {
    target_ = std::make_unique<FakeAoeServer>(config);
    auto device = AoeDevice::Open(address_, options, target_->Factory(), common::SystemClock());
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = std::move(*device);
  }

  // A pattern no two sectors share.
  static std::string Pattern(size_t n, char seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 13 + i / 512);
    return s;
  }

  uint64_t Stat(const std::string& key) const {
    const auto stats = device_->Stats();
    auto it = stats.find(key);
    return it == stats.end() ? 0 : std::stoull(it->second);
  }

  // Writes `n` bytes at `offset` through a queue of `depth` in requests of `bs`, then reads
  // them back through it; checks both the target and the read-back.
  void WriteAndReadBack(uint64_t offset, size_t n, uint32_t bs, uint32_t depth) {
    auto queue = device_->OpenQueue(depth);
    ASSERT_TRUE(queue.ok()) << queue.status();
    const std::string data = Pattern(n, 'w');
    std::string back(n, '\0');
    for (int pass = 0; pass < 2; ++pass) {
      uint64_t next = 0, done = 0;
      std::vector<IoCompletion> completions(depth);
      while (done < n) {
        while (next < n && (*queue)->in_flight() < depth) {
          IoRequest r{pass == 0 ? IoOp::kWrite : IoOp::kRead, offset + next, bs,
                      pass == 0 ? const_cast<char*>(data.data()) + next : back.data() + next, next};
          ASSERT_TRUE((*queue)->Submit({&r, 1}).ok());
          next += bs;
        }
        auto reaped = (*queue)->Reap(1, completions, -1);
        ASSERT_TRUE(reaped.ok());
        for (size_t i = 0; i < *reaped; ++i) {
          ASSERT_EQ(completions[i].result, bs) << "at " << completions[i].tag;
          done += bs;
        }
      }
    }
    EXPECT_TRUE(target_->Contents(offset, n) == data);
    EXPECT_TRUE(back == data);
  }

  // FastTimers with timeouts far too long to wait for, and the phase's cancel flag.
  static AoeDeviceOptions Cancellable(std::atomic<bool>* cancelled) {
    AoeDeviceOptions options = FastTimers();
    options.timers.request_timeout_nanos = 30'000 * kMs;
    options.timers.discovery_timeout_nanos = 30'000 * kMs;
    options.timers.cancelled = cancelled;
    return options;
  }

  // Sets `cancelled` 200 ms from now, as an abort arriving mid-wait; join it before the end.
  static std::thread CancelSoon(std::atomic<bool>& cancelled) {
    return std::thread([&cancelled] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      cancelled = true;
    });
  }

  const AoeAddress address_{"fake0", 1, 0};
  std::unique_ptr<FakeAoeServer> target_;
  std::unique_ptr<AoeDevice> device_;
};

TEST_F(AoeDeviceTest, DiscoveryReportsTheTargetAndItsCapacity) {
  Open({.sectors = 8192, .buffer_count = 12, .max_sectors = 2, .mtu = 1500});
  EXPECT_EQ(device_->size(), 8192u * 512);
  EXPECT_EQ(device_->params().buffer_count, 12);
  EXPECT_EQ(device_->params().firmware, 0x4019);
  EXPECT_EQ(device_->params().sectors_per_frame, 2u);
  EXPECT_EQ(device_->params().identify.model, "Fake AoE target");
  EXPECT_EQ(device_->params().Describe(),
            "user-space AoE initiator on fake0, shelf 1 slot 0, firmware 0x4019, 12 buffers, 2 "
            "sectors/frame");
  EXPECT_TRUE(device_->caps().async);
  EXPECT_EQ(device_->caps().alignment, 512u);
}

TEST_F(AoeDeviceTest, JumboFramesCarryMoreSectorsWhenBothEndsAllowThem) {
  Open({.max_sectors = 17, .mtu = 9000});
  EXPECT_EQ(device_->params().sectors_per_frame, 17u);
  WriteAndReadBack(0, 1 << 20, 1 << 20, 1);
  // The local MTU limits a target that would take more.
  Open({.max_sectors = 17, .mtu = 1500});
  EXPECT_EQ(device_->params().sectors_per_frame, 2u);
}

TEST_F(AoeDeviceTest, AbsentTargetFailsDiscoveryWithAClearError) {
  target_ = std::make_unique<FakeAoeServer>(FakeAoeServer::Config{});
  target_->Silence();
  const auto start = std::chrono::steady_clock::now();
  auto device = AoeDevice::Open(address_, FastTimers(), target_->Factory(), common::SystemClock());
  ASSERT_FALSE(device.ok());
  EXPECT_TRUE(absl::IsNotFound(device.status()));
  EXPECT_NE(std::string(device.status().message()).find("no answer to Query Config"),
            std::string::npos)
      << device.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(AoeDeviceTest, LargeRequestsAreSplitIntoFramesAndRoundTrip) {
  Open();
  WriteAndReadBack(4096, 1 << 20, 256 << 10, 4);
  EXPECT_GE(Stat("aoe.frames"), 2u * (1 << 20) / 1024);
}

TEST_F(AoeDeviceTest, FramesInFlightNeverExceedTheBufferCount) {
  Open({.buffer_count = 6});
  WriteAndReadBack(0, 512 << 10, 64 << 10, 32);
  EXPECT_EQ(target_->max_in_flight(), 6u);
}

TEST_F(AoeDeviceTest, FramesInFlightNeverExceedTheQueueDepth) {
  Open({.buffer_count = 16});
  WriteAndReadBack(0, 256 << 10, 64 << 10, 2);
  EXPECT_EQ(target_->max_in_flight(), 2u);
}

TEST_F(AoeDeviceTest, DroppedFramesAreSentAgain) {
  Open();
  target_->DropEvery(7);
  WriteAndReadBack(0, 512 << 10, 64 << 10, 8);
  EXPECT_GT(Stat("aoe.retransmits"), 0u);
  EXPECT_EQ(Stat("aoe.timeouts"), 0u);
}

TEST_F(AoeDeviceTest, DuplicateRepliesAreDroppedAsStale) {
  Open();
  target_->DuplicateEvery(3);
  WriteAndReadBack(0, 256 << 10, 64 << 10, 8);
  EXPECT_GT(Stat("aoe.stale_replies"), 0u);
}

TEST_F(AoeDeviceTest, LateRepliesToAnEarlierAttemptCompleteTheFrameOnce) {
  Open();
  target_->HoldReplies(5, /*until_resent=*/true);
  WriteAndReadBack(0, 64 << 10, 16 << 10, 4);
  // (At least: a thread descheduled for longer than the timeout adds spurious ones.)
  EXPECT_GE(Stat("aoe.late_replies"), 5u);
  // The reply to each retransmission then finds its frame done.
  EXPECT_GE(Stat("aoe.stale_replies"), 5u);
  EXPECT_GE(Stat("aoe.retransmits"), 5u);
}

TEST_F(AoeDeviceTest, AStaleReplyNeverTouchesAFinishedRequestsBuffer) {
  Open();
  auto queue = device_->OpenQueue(1);
  ASSERT_TRUE(queue.ok());
  // The first reply is held back; the retransmission's reply completes the read.
  target_->HoldReplies(1, /*until_resent=*/false);
  std::string first(1024, '\0');
  IoRequest r{IoOp::kRead, 0, 1024, first.data(), 1};
  ASSERT_TRUE((*queue)->Submit({&r, 1}).ok());
  IoCompletion c;
  ASSERT_EQ(*(*queue)->Reap(1, {&c, 1}, -1), 1u);
  ASSERT_EQ(c.result, 1024);
  EXPECT_TRUE(first == target_->Contents(0, 1024));
  // The caller reuses the buffer; the old reply arrives while the next request runs.
  first.assign(1024, 'Z');
  target_->ReleaseHeld();
  std::string second(1024, '\0');
  IoRequest r2{IoOp::kRead, 8192, 1024, second.data(), 2};
  ASSERT_TRUE((*queue)->Submit({&r2, 1}).ok());
  ASSERT_EQ(*(*queue)->Reap(1, {&c, 1}, -1), 1u);
  EXPECT_EQ(c.tag, 2u);
  EXPECT_EQ(c.result, 1024);
  EXPECT_EQ(first, std::string(1024, 'Z'));
  EXPECT_TRUE(second == target_->Contents(8192, 1024));
  EXPECT_GE(Stat("aoe.stale_replies"), 1u);
}

TEST_F(AoeDeviceTest, AtaErrorsFailTheRequestWithTheRegisters) {
  Open();
  target_->FailLba(100, 0x51, 0x40);
  std::string buf(4096, '\0');
  const common::Status status = device_->ReadAt(96 * 512, 4096, buf.data());
  ASSERT_FALSE(status.ok());
  const std::string message(status.message());
  EXPECT_NE(message.find("Input/output error"), std::string::npos) << message;
  EXPECT_NE(message.find("ATA status 0x51 (DRDY ERR), error 0x40 (UNC: uncorrectable data)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("LBA 100"), std::string::npos) << message;
  EXPECT_EQ(Stat("aoe.target_errors"), 1u);
  // Other sectors still work.
  EXPECT_TRUE(device_->ReadAt(0, 4096, buf.data()).ok());
}

TEST_F(AoeDeviceTest, AoeErrorsFailTheRequestWithTheCode) {
  Open();
  target_->AoeError(3);
  std::string buf(1024, 'x');
  const common::Status status = device_->WriteAt(0, 1024, buf.data());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("device unavailable (AoE error 3)"),
            std::string::npos)
      << status;
}

TEST_F(AoeDeviceTest, AVanishedTargetFailsEveryRequestWithinTheTimeout) {
  Open();
  auto queue = device_->OpenQueue(4);
  ASSERT_TRUE(queue.ok());
  target_->Silence();
  std::vector<std::string> buffers(4, std::string(64 << 10, '\0'));
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < 4; ++i) {
    IoRequest r{IoOp::kRead, i * uint64_t{64 << 10}, 64 << 10, buffers[i].data(), i};
    ASSERT_TRUE((*queue)->Submit({&r, 1}).ok());
  }
  std::vector<IoCompletion> done(4);
  size_t reaped = 0;
  while (reaped < 4) {
    auto n = (*queue)->Reap(4 - reaped, std::span(done).subspan(reaped), -1);
    ASSERT_TRUE(n.ok());
    reaped += *n;
  }
  const auto took = std::chrono::steady_clock::now() - start;
  for (const IoCompletion& c : done) EXPECT_EQ(c.result, -ETIMEDOUT);
  EXPECT_LT(took, std::chrono::milliseconds(1500));
  EXPECT_GE(took, std::chrono::milliseconds(350));
  IoRequest failed{IoOp::kRead, 0, 64 << 10, buffers[0].data(), 0};
  const std::string message(device_->RequestError(failed, -ETIMEDOUT).message());
  EXPECT_NE(message.find("gone or unreachable"), std::string::npos) << message;
  EXPECT_GT(Stat("aoe.timeouts"), 0u);
  EXPECT_GT(Stat("aoe.retransmits"), 0u);
  // Later requests fail at once.
  std::string buf(512, '\0');
  const auto again = std::chrono::steady_clock::now();
  EXPECT_FALSE(device_->ReadAt(0, 512, buf.data()).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - again, std::chrono::milliseconds(100));
}

TEST_F(AoeDeviceTest, CancellingAgainstASilentTargetEndsWithinASlice) {
  // A dead target and a long request timeout: cancelling the phase must not wait for it.
  std::atomic<bool> cancelled{false};
  Open({}, Cancellable(&cancelled));
  auto queue = device_->OpenQueue(4);
  ASSERT_TRUE(queue.ok());
  target_->Silence();
  std::vector<std::string> buffers(4, std::string(64 << 10, '\0'));
  for (uint32_t i = 0; i < 4; ++i) {
    IoRequest r{IoOp::kRead, i * uint64_t{64 << 10}, 64 << 10, buffers[i].data(), i};
    ASSERT_TRUE((*queue)->Submit({&r, 1}).ok());
  }
  std::thread canceller = CancelSoon(cancelled);
  const auto start = std::chrono::steady_clock::now();
  std::vector<IoCompletion> done(4);
  auto n = (*queue)->Reap(4, done, -1);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 0u);  // Nothing completed; the caller sees the flag.
  queue->reset();     // Abandons the frames instead of waiting 30 s for them.
  const auto took = std::chrono::steady_clock::now() - start;
  canceller.join();
  EXPECT_LT(took, std::chrono::milliseconds(1000));
  EXPECT_GE(took, std::chrono::milliseconds(150));
  // The blocking path gives up too, with ECANCELED.
  std::string buf(512, '\0');
  IoRequest r{IoOp::kRead, 0, 512, buf.data(), 0};
  const auto again = std::chrono::steady_clock::now();
  EXPECT_EQ(device_->Execute(r), -ECANCELED);
  EXPECT_LT(std::chrono::steady_clock::now() - again, std::chrono::milliseconds(500));
}

TEST_F(AoeDeviceTest, CancellingWhileTheQueueIsDestroyedStopsItsWait) {
  // The queue is already waiting for its frames in its destructor when the phase is cancelled.
  std::atomic<bool> cancelled{false};
  Open({}, Cancellable(&cancelled));
  auto queue = device_->OpenQueue(2);
  ASSERT_TRUE(queue.ok());
  target_->Silence();
  std::string buffer(4096, '\0');
  IoRequest r{IoOp::kRead, 0, 4096, buffer.data(), 1};
  ASSERT_TRUE((*queue)->Submit({&r, 1}).ok());
  std::thread canceller = CancelSoon(cancelled);
  const auto start = std::chrono::steady_clock::now();
  queue->reset();
  const auto took = std::chrono::steady_clock::now() - start;
  canceller.join();
  EXPECT_LT(took, std::chrono::milliseconds(1000));
}

TEST_F(AoeDeviceTest, CancellingDiscoveryOfAnAbsentTargetEndsIt) {
  std::atomic<bool> cancelled{false};
  const AoeDeviceOptions options = Cancellable(&cancelled);
  FakeAoeServer target({});
  target.Silence();
  std::thread canceller = CancelSoon(cancelled);
  const auto start = std::chrono::steady_clock::now();
  auto device = AoeDevice::Open(address_, options, target.Factory(), common::SystemClock());
  const auto took = std::chrono::steady_clock::now() - start;
  canceller.join();
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kCancelled) << device.status();
  EXPECT_LT(took, std::chrono::milliseconds(1000));
}

TEST_F(AoeDeviceTest, FlushWaitsForEarlierWrites) {
  Open();
  auto queue = device_->OpenQueue(4);
  ASSERT_TRUE(queue.ok());
  const std::string data = Pattern(16 << 10, 'f');
  IoRequest batch[3] = {
      {IoOp::kWrite, 0, 8 << 10, const_cast<char*>(data.data()), 0},
      {IoOp::kFdatasync, 0, 0, nullptr, 1},
      {IoOp::kWrite, 8 << 10, 8 << 10, const_cast<char*>(data.data()) + (8 << 10), 2}};
  ASSERT_TRUE((*queue)->Submit(batch).ok());
  std::vector<IoCompletion> done(3);
  size_t reaped = 0;
  while (reaped < 3) reaped += *(*queue)->Reap(3 - reaped, std::span(done).subspan(reaped), -1);
  for (const IoCompletion& c : done) EXPECT_EQ(c.result, c.tag == 1 ? 0 : 8 << 10);
  const std::vector<uint8_t> commands = target_->commands();
  ASSERT_EQ(commands.size(), 1u + 8 + 1 + 8);  // IDENTIFY, two writes of 8 frames, a flush
  for (size_t i = 1; i <= 8; ++i) EXPECT_EQ(commands[i], kAtaWriteExt) << i;
  EXPECT_EQ(commands[9], kAtaFlushCache);
  EXPECT_TRUE(target_->Contents(0, data.size()) == data);
}

TEST_F(AoeDeviceTest, RefusesBadRequestsWithoutSendingThem) {
  Open({}, FastTimers(/*writable=*/false));
  std::string buf(4096, 'x');
  IoRequest write{IoOp::kWrite, 0, 4096, buf.data(), 0};
  EXPECT_EQ(device_->Execute(write), -EBADF);
  IoRequest unaligned{IoOp::kRead, 100, 512, buf.data(), 0};
  EXPECT_EQ(device_->Execute(unaligned), -EINVAL);
  IoRequest beyond{IoOp::kRead, device_->size() - 512, 1024, buf.data(), 0};
  EXPECT_EQ(device_->Execute(beyond), -EINVAL);
  auto queue = device_->OpenQueue(1);
  IoRequest two[2] = {{IoOp::kRead, 0, 512, buf.data(), 0}, {IoOp::kRead, 0, 512, buf.data(), 1}};
  EXPECT_TRUE(absl::IsFailedPrecondition((*queue)->Submit(two)));
  EXPECT_EQ(target_->commands().size(), 1u);  // IDENTIFY only
}

TEST_F(AoeDeviceTest, StatsNameTheCountersAndTheRttEstimate) {
  Open();
  std::string buf(4096, '\0');
  ASSERT_TRUE(device_->ReadAt(0, 4096, buf.data()).ok());
  const auto stats = device_->Stats();
  for (const char* key : {"aoe.frames", "aoe.retransmits", "aoe.timeouts", "aoe.late_replies",
                          "aoe.stale_replies", "aoe.target_errors", "aoe.srtt_us", "aoe.rto_us",
                          "aoe.buffer_count", "aoe.sectors_per_frame"}) {
    EXPECT_TRUE(stats.count(key)) << key;
  }
  EXPECT_EQ(stats.at("aoe.frames"), "4");
}

}  // namespace
}  // namespace stormark::agent::aoe
