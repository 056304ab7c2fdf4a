#include "agent/rpc/unix_listener.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/server_posix.h>

#include <chrono>
#include <thread>
#include <vector>

#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::ErrnoError;
using common::Status;
using common::StrCat;

constexpr mode_t kSocketMode = 0660;
constexpr mode_t kDirectoryMode = 0750;
constexpr char kGroupName[] = "stormark";

std::string GroupName(gid_t gid) {
  std::vector<char> buffer(16384);
  struct group entry, *found = nullptr;
  if (getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    return found->gr_name;
  }
  return std::to_string(gid);
}

std::string UserName(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry, *found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

// Group `stormark` when it exists and this process may give files to it; else our own.
gid_t SocketGroup() {
  std::vector<char> buffer(16384);
  struct group entry, *found = nullptr;
  if (getgrnam_r(kGroupName, &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return getegid();
  }
  if (geteuid() == 0 || found->gr_gid == getegid()) return found->gr_gid;
  const int count = getgroups(0, nullptr);
  std::vector<gid_t> groups(count > 0 ? count : 0);
  if (count > 0 && getgroups(count, groups.data()) == count) {
    for (gid_t g : groups) {
      if (g == found->gr_gid) return g;
    }
  }
  return getegid();
}

Status MakeAddress(const std::string& path, sockaddr_un* addr) {
  if (path.size() >= sizeof(addr->sun_path)) {
    return absl::InvalidArgumentError(StrCat("unix:", path, ": the socket path is longer than ",
                                             sizeof(addr->sun_path) - 1, " bytes"));
  }
  *addr = {};
  addr->sun_family = AF_UNIX;
  path.copy(addr->sun_path, path.size());
  return absl::OkStatus();
}

// Whether some process accepts connections on the socket at `path`. Non-blocking: a server
// whose backlog is full (EAGAIN) is alive too, and must not hang this start.
common::StatusOr<bool> SomeoneListens(const sockaddr_un& addr, const std::string& path) {
  const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (probe < 0) return ErrnoError("socket", errno);
  const int rc = connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int error = errno;
  close(probe);
  if (rc == 0 || error == EAGAIN) return true;
  if (error == ECONNREFUSED) return false;
  return ErrnoError(StrCat("cannot tell whether a process serves unix:", path), error);
}

// The parent directory of `path`, made 0750 with the socket's group when missing.
Status EnsureDirectory(const std::string& path, gid_t group) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(StrCat("unix:", path, ": ", dir, " is not a directory"));
    }
    return absl::OkStatus();
  }
  if (errno != ENOENT) return ErrnoError(StrCat("unix:", path, ": ", dir), errno);
  if (mkdir(dir.c_str(), kDirectoryMode) != 0 && errno != EEXIST) {
    return ErrnoError(StrCat("unix:", path, ": cannot create ", dir), errno);
  }
  // Members of the socket's group must be able to reach it; mkdir's mode is under the umask.
  if (chown(dir.c_str(), static_cast<uid_t>(-1), group) != 0 ||
      chmod(dir.c_str(), kDirectoryMode) != 0) {
    return ErrnoError(StrCat("unix:", path, ": cannot set the owner and mode of ", dir), errno);
  }
  return absl::OkStatus();
}

}  // namespace

// Answers every call of a refused connection with PERMISSION_DENIED, whatever the method.
class UnixListener::RefusingService final : public grpc::CallbackGenericService {
 public:
  explicit RefusingService(const PeerRegistry& registry) : registry_(registry) {}

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    std::optional<PeerRegistry::Entry> entry = registry_.Find(ctx->peer());
    std::string message = entry && !entry->refusal.empty()
                              ? entry->refusal
                              : std::string("this agent does not admit this connection's user");
    class Reactor final : public grpc::ServerGenericBidiReactor {
     public:
      explicit Reactor(std::string message) {
        Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, message));
      }
      void OnDone() override { delete this; }
    };
    return new Reactor(std::move(message));
  }

 private:
  const PeerRegistry& registry_;
};

UnixListener::UnixListener(Options options, const common::Clock& clock)
    : options_(std::move(options)), agent_uid_(geteuid()), registry_(clock) {}

common::StatusOr<std::unique_ptr<UnixListener>> UnixListener::Bind(Options options,
                                                                   const common::Clock& clock) {
  const std::string path = options.path;
  if (path.empty() || path.front() != '/') {
    return absl::InvalidArgumentError(StrCat("unix:", path, ": the socket path must be absolute"));
  }
  sockaddr_un addr;
  RETURN_IF_ERROR(MakeAddress(path, &addr));
  std::unique_ptr<UnixListener> listener(new UnixListener(std::move(options), clock));
  const gid_t group = SocketGroup();
  RETURN_IF_ERROR(EnsureDirectory(path, group));

  // The lock makes "is anyone serving it?" and "then it is mine" one step: a second agent
  // started at the same moment cannot remove the first one's fresh socket as stale.
  const std::string lock_path = path + ".lock";
  listener->lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (listener->lock_fd_ < 0) return ErrnoError(StrCat("unix:", path, ": ", lock_path), errno);
  if (flock(listener->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(
          StrCat("another stormark-agent serves unix:", path, " (it holds ", lock_path,
                 "); stop it first, or give this one another --listen"));
    }
    return ErrnoError(StrCat("unix:", path, ": lock ", lock_path), errno);
  }

  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          StrCat("unix:", path, ": the path exists and is not a socket; refusing to replace it"));
    }
    ASSIGN_OR_RETURN(bool live, SomeoneListens(addr, path));
    if (live) {
      return absl::FailedPreconditionError(
          StrCat("a process serves unix:", path,
                 "; refusing to replace its socket (stop it first, "
                 "or give this agent another --listen)"));
    }
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return ErrnoError(StrCat("cannot remove the stale socket ", path), errno);
    }
    if (listener->options_.log) {
      listener->options_.log(StrCat("removed the stale socket ", path, " (nobody served it)"));
    }
  } else if (errno != ENOENT) {
    return ErrnoError(StrCat("unix:", path), errno);
  }

  listener->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listener->listen_fd_ < 0) return ErrnoError("socket", errno);
  // On Linux, bind gives the file the socket's own mode (under the umask): never, even for a
  // moment, wider than 0660.
  fchmod(listener->listen_fd_, kSocketMode);
  if (bind(listener->listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return ErrnoError(StrCat("cannot listen on unix:", path), errno);
  }
  if (fchownat(AT_FDCWD, path.c_str(), static_cast<uid_t>(-1), group, AT_SYMLINK_NOFOLLOW) != 0 ||
      chmod(path.c_str(), kSocketMode) != 0 || lstat(path.c_str(), &st) != 0) {
    const Status error =
        ErrnoError(StrCat("unix:", path, ": cannot set its owner and mode"), errno);
    unlink(path.c_str());
    return error;
  }
  listener->socket_dev_ = st.st_dev;
  listener->socket_ino_ = st.st_ino;
  listener->permissions_ = StrCat("0", (st.st_mode >> 6) & 7, (st.st_mode >> 3) & 7, st.st_mode & 7,
                                  " ", UserName(st.st_uid), ":", GroupName(st.st_gid));
  if (listen(listener->listen_fd_, SOMAXCONN) != 0) {
    const Status error = ErrnoError(StrCat("cannot listen on unix:", path), errno);
    unlink(path.c_str());
    return error;
  }
  listener->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (listener->wake_fd_ < 0) return ErrnoError("eventfd", errno);

  listener->refusing_service_ = std::make_unique<RefusingService>(listener->registry_);
  grpc::ServerBuilder builder;
  builder.RegisterCallbackGenericService(listener->refusing_service_.get());
  // Refused callers get their one answer; nothing they send needs to be big.
  builder.SetMaxReceiveMessageSize(64 * 1024);
  listener->refusing_ = builder.BuildAndStart();
  if (!listener->refusing_) {
    return absl::InternalError("cannot start the server that answers refused connections");
  }
  return listener;
}

Status UnixListener::Serve(grpc::Server* admitted) {
  if (admitted_ != nullptr || stopped_) {
    return absl::FailedPreconditionError("UnixListener::Serve called twice or after Stop");
  }
  admitted_ = admitted;
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

void UnixListener::AcceptLoop() {
  auto last_sweep = std::chrono::steady_clock::now();
  while (!stopped_) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const int ready = poll(fds, 2, 1000);
    if (stopped_) break;
    if (ready > 0 && (fds[0].revents & POLLIN) != 0) Accept();
    const auto now = std::chrono::steady_clock::now();
    if (now - last_sweep >= std::chrono::seconds(1)) {
      registry_.Sweep();
      last_sweep = now;
    }
  }
}

void UnixListener::Accept() {
  const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) {
    if (errno == EMFILE || errno == ENFILE) {
      // Out of descriptors: back off rather than spin on a connection we cannot take.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return;
  }
  common::StatusOr<PeerIdentity> peer = UnixPeerOf(fd);
  if (!peer.ok()) {
    close(fd);
    if (options_.log) options_.log(StrCat("dropped a connection: ", peer.status().message()));
    return;
  }
  PeerRegistry::Entry entry{*peer, ""};
  const Status allowed = CheckUnixPeer(options_.access, *peer, agent_uid_);
  if (!allowed.ok()) {
    entry.refusal = std::string(allowed.message());
    if (options_.log) options_.log(StrCat("refused a connection: ", entry.refusal));
  }
  const bool refused = !allowed.ok();
  common::StatusOr<int> handed = registry_.Add(fd, std::move(entry));
  if (!handed.ok()) {
    if (options_.log) options_.log(StrCat("dropped a connection: ", handed.status().message()));
    return;
  }
  grpc::AddInsecureChannelFromFd(refused ? refusing_.get() : admitted_, *handed);
}

PeerIdentity UnixListener::Identify(const std::string& peer) const {
  std::optional<PeerRegistry::Entry> entry = registry_.Find(peer);
  // A refused connection never reaches the admitted server; this is for completeness.
  if (!entry || !entry->refusal.empty()) return PeerIdentity();
  return entry->identity;
}

void UnixListener::Stop() {
  if (stopped_.exchange(true)) return;
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }
  if (acceptor_.joinable()) acceptor_.join();
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    listen_fd_ = -1;
  }
  if (refusing_) refusing_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  // Remove the file only if it is still ours: not a socket that replaced it.
  struct stat st;
  if (socket_ino_ != 0 && lstat(options_.path.c_str(), &st) == 0 && st.st_dev == socket_dev_ &&
      st.st_ino == socket_ino_) {
    unlink(options_.path.c_str());
  }
}

UnixListener::~UnixListener() {
  Stop();
  if (refusing_) refusing_->Wait();
  if (wake_fd_ >= 0) close(wake_fd_);
  if (lock_fd_ >= 0) close(lock_fd_);
}

}  // namespace stormark::agent
