#include "agent/rpc/peer_registry.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "common/strings.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

class ManualClock : public common::Clock {
 public:
  int64_t NowUnixNanos() const override { return now_; }
  int64_t MonotonicNanos() const override { return now_; }
  bool SleepUntilUnixNanos(int64_t, int64_t) const override { return true; }
  void Advance(int64_t nanos) { now_ += nanos; }

 private:
  std::atomic<int64_t> now_{1'000'000'000};
};

constexpr int64_t kKeep = 5'000'000'000;

PeerRegistry::Entry EntryFor(uid_t uid, std::string refusal = "") {
  PeerRegistry::Entry entry;
  entry.identity.kind = PeerIdentity::Kind::kUnixUser;
  entry.identity.uid = uid;
  entry.refusal = std::move(refusal);
  return entry;
}

// One end of a fresh socket pair; the other end is closed with it by the test.
struct Pair {
  Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0); }
  ~Pair() {
    if (fds[1] >= 0) close(fds[1]);
  }
  int fds[2] = {-1, -1};
};

std::string Peer(int fd) { return common::StrCat("fd:", fd); }

TEST(PeerRegistry, FindsTheEntryByGrpcsPeerName) {
  ManualClock clock;
  PeerRegistry registry(clock, kKeep);
  Pair pair;
  const int fd = pair.fds[0];
  common::StatusOr<int> handed = registry.Add(fd, EntryFor(1000));
  ASSERT_TRUE(handed.ok()) << handed.status();
  EXPECT_EQ(*handed, fd);
  ASSERT_TRUE(registry.Find(Peer(fd)).has_value());
  EXPECT_EQ(registry.Find(Peer(fd))->identity.uid, 1000u);
  EXPECT_FALSE(registry.Find("ipv4:127.0.0.1:5000").has_value());
  EXPECT_FALSE(registry.Find("fd:").has_value());
  EXPECT_FALSE(registry.Find(common::StrCat("fd:", fd, "x")).has_value());
  EXPECT_FALSE(registry.Find(Peer(fd + 1000)).has_value());
  close(*handed);
}

TEST(PeerRegistry, ANumberAClosedConnectionHeldGoesToNoOtherConnection) {
  ManualClock clock;
  PeerRegistry registry(clock, kKeep);
  Pair first;
  const int old_fd = *registry.Add(first.fds[0], EntryFor(1000));
  close(old_fd);  // as gRPC does when the connection ends; a late call may still name it
  Pair second;
  ASSERT_EQ(second.fds[0], old_fd) << "the kernel hands out the lowest free number";
  common::StatusOr<int> handed = registry.Add(second.fds[0], EntryFor(2000));
  ASSERT_TRUE(handed.ok()) << handed.status();
  EXPECT_NE(*handed, old_fd);
  EXPECT_EQ(registry.Find(Peer(old_fd))->identity.uid, 1000u);
  EXPECT_EQ(registry.Find(Peer(*handed))->identity.uid, 2000u);
  // The duplicate is the same connection.
  ASSERT_EQ(write(second.fds[1], "x", 1), 1);
  char c = 0;
  EXPECT_EQ(read(*handed, &c, 1), 1);
  EXPECT_EQ(c, 'x');
  close(*handed);
}

TEST(PeerRegistry, SweepForgetsAConnectionOnlyLongAfterItClosed) {
  ManualClock clock;
  PeerRegistry registry(clock, kKeep);
  Pair open_pair, closing_pair;
  const int open_fd = *registry.Add(open_pair.fds[0], EntryFor(1));
  const int closing_fd = *registry.Add(closing_pair.fds[0], EntryFor(2));
  registry.Sweep();
  EXPECT_EQ(registry.open(), 2u);
  close(closing_fd);
  registry.Sweep();
  EXPECT_EQ(registry.open(), 1u);
  EXPECT_EQ(registry.size(), 2u);
  clock.Advance(kKeep - 1);
  registry.Sweep();
  EXPECT_TRUE(registry.Find(Peer(closing_fd)).has_value());
  clock.Advance(1);
  registry.Sweep();
  EXPECT_FALSE(registry.Find(Peer(closing_fd)).has_value());
  EXPECT_TRUE(registry.Find(Peer(open_fd)).has_value());
  EXPECT_EQ(registry.size(), 1u);
  close(open_fd);
}

TEST(PeerRegistry, AFileAtAClosedConnectionsNumberCountsAsClosed) {
  ManualClock clock;
  PeerRegistry registry(clock, kKeep);
  Pair pair;
  const int fd = *registry.Add(pair.fds[0], EntryFor(1));
  close(fd);
  const int file = dup(STDERR_FILENO);  // most likely takes the same number
  registry.Sweep();
  EXPECT_EQ(registry.open(), 0u);
  close(file);
}

TEST(PeerRegistry, KeepsTheRefusal) {
  ManualClock clock;
  PeerRegistry registry(clock, kKeep);
  Pair pair;
  const int fd = *registry.Add(pair.fds[0], EntryFor(65534, "uid 65534 may not use this agent"));
  EXPECT_EQ(registry.Find(Peer(fd))->refusal, "uid 65534 may not use this agent");
  close(fd);
}

}  // namespace
}  // namespace stormark::agent
