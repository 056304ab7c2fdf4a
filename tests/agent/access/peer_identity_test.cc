#include "agent/access/peer_identity.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

TEST(UnixPeerOf, ReportsThisProcessAtTheOtherEnd) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  common::StatusOr<PeerIdentity> peer = UnixPeerOf(fds[0]);
  close(fds[0]);
  close(fds[1]);
  ASSERT_TRUE(peer.ok()) << peer.status();
  EXPECT_EQ(peer->kind, PeerIdentity::Kind::kUnixUser);
  EXPECT_EQ(peer->uid, geteuid());
  EXPECT_EQ(peer->gid, getegid());
  EXPECT_EQ(peer->pid, getpid());
  EXPECT_EQ(peer->Describe(),
            common::StrCat("uid ", geteuid(), peer->user.empty() ? "" : " (" + peer->user + ")",
                           " gid ", getegid(), " pid ", getpid()));
  // The kernel's groups of this process, which always include nothing we are not in.
  std::vector<gid_t> ours(getgroups(0, nullptr));
  ASSERT_EQ(getgroups(ours.size(), ours.data()), static_cast<int>(ours.size()));
  for (gid_t g : peer->groups) EXPECT_NE(std::find(ours.begin(), ours.end(), g), ours.end()) << g;
}

TEST(UnixPeerOf, FailsOnANonSocket) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  EXPECT_FALSE(UnixPeerOf(pipe_fds[0]).ok());
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST(PeerIdentity, DescribesEachKind) {
  PeerIdentity peer;
  EXPECT_EQ(peer.Describe(), "unknown");
  peer.kind = PeerIdentity::Kind::kInProcess;
  EXPECT_EQ(peer.Describe(), "in-process");
  peer.kind = PeerIdentity::Kind::kUnauthenticated;
  peer.address = "ipv4:127.0.0.1:5000";
  EXPECT_EQ(peer.Describe(), "ipv4:127.0.0.1:5000");
  peer.kind = PeerIdentity::Kind::kCertificate;
  peer.common_name = "controller";
  EXPECT_EQ(peer.Describe(), "ipv4:127.0.0.1:5000 CN=controller");
  PeerIdentity user;
  user.kind = PeerIdentity::Kind::kUnixUser;
  user.uid = 65534;
  user.gid = 65534;
  user.user = "nobody";
  EXPECT_EQ(user.Describe(), "uid 65534 (nobody) gid 65534");
}

TEST(TransportPeerOf, APeerWithoutTlsIsUnauthenticated) {
  PeerIdentity peer = TransportPeerOf(nullptr, "ipv4:10.0.0.5:4000");
  EXPECT_EQ(peer.kind, PeerIdentity::Kind::kUnauthenticated);
  EXPECT_EQ(peer.address, "ipv4:10.0.0.5:4000");
}

}  // namespace
}  // namespace stormark::agent
