#include "agent/devices/net_queue.h"

#include <cerrno>
#include <deque>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

// A connection whose requests complete when the test says so.
class FakeConnection : public NetConnection {
 public:
  struct State {
    std::vector<IoRequest> started;
    std::deque<IoCompletion> ready;
    bool lost = false;
  };
  explicit FakeConnection(State& state) : state_(state) {}

  common::Status Start(const IoRequest& request) override {
    if (state_.lost) return absl::UnavailableError("lost the connection to fake");
    state_.started.push_back(request);
    return absl::OkStatus();
  }
  common::Status Service(int, std::vector<IoCompletion>* done) override {
    done->insert(done->end(), state_.ready.begin(), state_.ready.end());
    state_.ready.clear();
    if (state_.lost) return absl::UnavailableError("lost the connection to fake");
    return absl::OkStatus();
  }

 private:
  State& state_;
};

IoRequest Request(IoOp op, uint64_t tag) {
  return {op, tag * 4096, op == IoOp::kRead || op == IoOp::kWrite ? 4096u : 0u, nullptr, tag};
}

TEST(NetQueue, FlushWaitsForEarlierRequestsAndHoldsLaterOnes) {
  FakeConnection::State state;
  NetStats stats;
  NetQueue queue(std::make_unique<FakeConnection>(state), 4, {}, "fake", stats);
  const IoRequest batch[] = {Request(IoOp::kWrite, 1), Request(IoOp::kWrite, 2),
                             Request(IoOp::kFdatasync, 3), Request(IoOp::kRead, 4)};
  ASSERT_TRUE(queue.Submit(batch).ok());
  ASSERT_EQ(state.started.size(), 2u);  // The flush waits for both writes.
  EXPECT_EQ(queue.in_flight(), 4u);

  IoCompletion out[4];
  state.ready.push_back({1, 4096});
  ASSERT_EQ(*queue.Reap(1, out, 0), 1u);
  EXPECT_EQ(state.started.size(), 2u);
  state.ready.push_back({2, 4096});
  ASSERT_EQ(*queue.Reap(1, out, 0), 1u);
  ASSERT_EQ(state.started.size(), 3u);  // Now the flush, and the read still waits for it.
  EXPECT_EQ(state.started[2].op, IoOp::kFdatasync);
  state.ready.push_back({3, 0});
  ASSERT_EQ(*queue.Reap(1, out, 0), 1u);
  ASSERT_EQ(state.started.size(), 4u);
  EXPECT_EQ(state.started[3].op, IoOp::kRead);
  EXPECT_EQ(queue.in_flight(), 1u);
}

TEST(NetQueue, RefusesMoreThanItsDepth) {
  FakeConnection::State state;
  NetStats stats;
  NetQueue queue(std::make_unique<FakeConnection>(state), 2, {}, "fake", stats);
  const IoRequest batch[] = {Request(IoOp::kRead, 1), Request(IoOp::kRead, 2),
                             Request(IoOp::kRead, 3)};
  EXPECT_EQ(queue.Submit(batch).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(state.started.empty());
}

TEST(NetQueue, LostConnectionFailsReapAndEverythingAfter) {
  FakeConnection::State state;
  NetStats stats;
  NetQueue queue(std::make_unique<FakeConnection>(state), 2, {}, "fake", stats);
  const IoRequest batch[] = {Request(IoOp::kRead, 1)};
  ASSERT_TRUE(queue.Submit(batch).ok());
  state.lost = true;
  IoCompletion out[2];
  auto reaped = queue.Reap(1, out, -1);
  ASSERT_FALSE(reaped.ok());
  EXPECT_THAT(reaped.status().message(), HasSubstr("lost the connection to fake"));
  EXPECT_FALSE(queue.Submit(batch).ok());
  EXPECT_EQ(stats.lost_connections.load(), 1u);
}

TEST(NetQueue, SilentServerTimesOut) {
  FakeConnection::State state;
  NetStats stats;
  NetOptions options;
  options.timeout_nanos = 200'000'000;
  NetQueue queue(std::make_unique<FakeConnection>(state), 2, options, "NBD server nbd://x/", stats);
  const IoRequest batch[] = {Request(IoOp::kRead, 1)};
  ASSERT_TRUE(queue.Submit(batch).ok());
  IoCompletion out[2];
  const int64_t start = NetNowNanos();
  auto reaped = queue.Reap(1, out, -1);
  ASSERT_FALSE(reaped.ok());
  EXPECT_EQ(reaped.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(reaped.status().message(), HasSubstr("NBD server nbd://x/ sent no reply"));
  EXPECT_LT(NetNowNanos() - start, 2'000'000'000);
  EXPECT_EQ(stats.timeouts.load(), 1u);
}

TEST(NetQueue, CancelledPhaseEndsTheWait) {
  FakeConnection::State state;
  NetStats stats;
  std::atomic<bool> cancelled{true};
  NetOptions options;
  options.cancelled = &cancelled;
  NetQueue queue(std::make_unique<FakeConnection>(state), 2, options, "fake", stats);
  const IoRequest batch[] = {Request(IoOp::kRead, 1)};
  ASSERT_TRUE(queue.Submit(batch).ok());
  IoCompletion out[2];
  auto reaped = queue.Reap(1, out, -1);
  ASSERT_TRUE(reaped.ok());
  EXPECT_EQ(*reaped, 0u);
}

TEST(ExecuteOnConnection, ReturnsTheResultOrDropsALostConnection) {
  FakeConnection::State state;
  FakeConnection connection(state);
  NetStats stats;
  bool lost = true;
  state.ready.push_back({7, 4096});
  EXPECT_EQ(ExecuteOnConnection(connection, Request(IoOp::kRead, 7), {}, stats, &lost), 4096);
  EXPECT_FALSE(lost);
  state.lost = true;
  EXPECT_EQ(ExecuteOnConnection(connection, Request(IoOp::kRead, 8), {}, stats, &lost),
            -ECONNRESET);
  EXPECT_TRUE(lost);
}

}  // namespace
}  // namespace stormark::agent
