#include "agent/rpc/unix_listener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

class UnixListenerTest : public TempDirTest {
 protected:
  std::string SocketPath() const { return dir() + "/agent.sock"; }

  common::StatusOr<std::unique_ptr<UnixListener>> Bind(const std::string& path) {
    UnixListener::Options options;
    options.path = path;
    options.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back(line);
    };
    return UnixListener::Bind(std::move(options), common::SystemClock());
  }

  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

  // A plain socket bound at `path`; listening when `listen_too`. The caller closes it.
  static int RawSocket(const std::string& path, bool listen_too) {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, path.size());
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << errno;
    if (listen_too) {
      EXPECT_EQ(listen(fd, 1), 0);
    }
    return fd;
  }

  static mode_t ModeOf(const std::string& path) {
    struct stat st;
    EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
    return st.st_mode;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> log_;  // Guarded by mu_.
};

TEST_F(UnixListenerTest, MakesTheSocket0660AndAMissingDirectory0750) {
  const std::string path = dir() + "/run/agent.sock";
  auto listener = Bind(path);
  ASSERT_TRUE(listener.ok()) << listener.status();
  EXPECT_TRUE(S_ISSOCK(ModeOf(path)));
  EXPECT_EQ(ModeOf(path) & 07777, 0660u);
  EXPECT_TRUE(S_ISDIR(ModeOf(dir() + "/run")));
  EXPECT_EQ(ModeOf(dir() + "/run") & 07777, 0750u);
  EXPECT_THAT((*listener)->permissions(), ::testing::StartsWith("0660 "));
}

TEST_F(UnixListenerTest, RefusesASocketAnotherAgentHolds) {
  auto first = Bind(SocketPath());
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Bind(SocketPath());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(),
              HasSubstr(common::StrCat("another stormark-agent serves unix:", SocketPath())));
  // The first one's socket is still there, still accepting.
  const int probe = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  SocketPath().copy(addr.sun_path, SocketPath().size());
  EXPECT_EQ(connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << errno;
  close(probe);
}

TEST_F(UnixListenerTest, RefusesASocketALiveProcessServes) {
  const int other = RawSocket(SocketPath(), /*listen_too=*/true);
  auto listener = Bind(SocketPath());
  close(other);
  ASSERT_FALSE(listener.ok());
  EXPECT_EQ(listener.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(listener.status().message(), HasSubstr("refusing to replace its socket"));
  EXPECT_TRUE(S_ISSOCK(ModeOf(SocketPath())));
}

TEST_F(UnixListenerTest, ReplacesAStaleSocketAndSaysSo) {
  close(RawSocket(SocketPath(), /*listen_too=*/false));
  auto listener = Bind(SocketPath());
  ASSERT_TRUE(listener.ok()) << listener.status();
  EXPECT_THAT(Log(), Contains(HasSubstr("removed the stale socket")));
}

TEST_F(UnixListenerTest, RefusesAPathThatIsNotASocket) {
  std::ofstream(SocketPath()) << "precious";
  auto listener = Bind(SocketPath());
  ASSERT_FALSE(listener.ok());
  EXPECT_THAT(listener.status().message(), HasSubstr("exists and is not a socket"));
  std::ifstream in(SocketPath());
  std::string text;
  in >> text;
  EXPECT_EQ(text, "precious");
}

TEST_F(UnixListenerTest, RefusesARelativeOrTooLongPath) {
  EXPECT_EQ(Bind("agent.sock").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Bind(dir() + "/" + std::string(120, 'a')).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(UnixListenerTest, StopRemovesItsSocketButNotAReplacement) {
  {
    auto listener = Bind(SocketPath());
    ASSERT_TRUE(listener.ok()) << listener.status();
    (*listener)->Stop();
    struct stat st;
    EXPECT_NE(lstat(SocketPath().c_str(), &st), 0);
  }
  auto listener = Bind(SocketPath());
  ASSERT_TRUE(listener.ok()) << listener.status();
  // Someone replaces the socket file (an admin, by hand): it is not ours to remove.
  ASSERT_EQ(unlink(SocketPath().c_str()), 0);
  const int other = RawSocket(SocketPath(), /*listen_too=*/false);
  (*listener)->Stop();
  EXPECT_TRUE(S_ISSOCK(ModeOf(SocketPath())));
  close(other);
}

}  // namespace
}  // namespace stormark::agent
