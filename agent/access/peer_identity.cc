#include "agent/access/peer_identity.h"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <grpc/grpc_security_constants.h>
#include <grpcpp/grpcpp.h>

#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::StrCat;

std::string UserName(uid_t uid, gid_t* primary_gid) {
  std::vector<char> buffer(16384);
  passwd entry;
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return "";
  }
  if (primary_gid != nullptr) *primary_gid = entry.pw_gid;
  return entry.pw_name;
}

// SO_PEERGROUPS (Linux 4.13): the groups the peer held when it connected.
bool PeerGroups(int fd, std::vector<gid_t>* groups) {
  socklen_t len = 0;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, nullptr, &len) != 0 && errno != ERANGE) {
    return false;
  }
  groups->resize(len / sizeof(gid_t));
  if (len == 0) return true;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups->data(), &len) != 0) return false;
  groups->resize(len / sizeof(gid_t));
  return true;
}

// The groups of /etc/group for `user`: what a kernel without SO_PEERGROUPS leaves us.
std::vector<gid_t> GroupList(const std::string& user, gid_t gid) {
  int count = 64;
  std::vector<gid_t> groups(count);
  if (getgrouplist(user.c_str(), gid, groups.data(), &count) < 0) {
    groups.resize(count);
    if (getgrouplist(user.c_str(), gid, groups.data(), &count) < 0) return {gid};
  }
  groups.resize(count);
  return groups;
}

std::vector<std::string> Properties(const grpc::AuthContext& auth, const char* name) {
  std::vector<std::string> values;
  for (const grpc::string_ref& value : auth.FindPropertyValues(name)) {
    values.emplace_back(value.data(), value.size());
  }
  return values;
}

}  // namespace

std::string PeerIdentity::Describe() const {
  switch (kind) {
    case Kind::kUnixUser:
      return StrCat("uid ", uid, user.empty() ? "" : StrCat(" (", user, ")"), " gid ", gid,
                    pid > 0 ? StrCat(" pid ", pid) : "");
    case Kind::kCertificate:
      return StrCat(address, address.empty() ? "" : " ", "CN=", common_name);
    case Kind::kUnauthenticated:
      return address.empty() ? "unauthenticated" : address;
    case Kind::kInProcess:
      return "in-process";
    case Kind::kUnknown:
      break;
  }
  return "unknown";
}

common::StatusOr<PeerIdentity> UnixPeerOf(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return common::ErrnoError("SO_PEERCRED", errno);
  }
  PeerIdentity peer;
  peer.kind = PeerIdentity::Kind::kUnixUser;
  peer.uid = cred.uid;
  peer.gid = cred.gid;
  peer.pid = cred.pid;
  gid_t primary = cred.gid;
  peer.user = UserName(cred.uid, &primary);
  if (!PeerGroups(fd, &peer.groups)) {
    peer.groups = peer.user.empty() ? std::vector<gid_t>{} : GroupList(peer.user, primary);
  }
  return peer;
}

PeerIdentity TransportPeerOf(const grpc::AuthContext* auth, std::string address) {
  PeerIdentity peer;
  peer.address = std::move(address);
  if (auth == nullptr || !auth->IsPeerAuthenticated()) {
    peer.kind = PeerIdentity::Kind::kUnauthenticated;
    return peer;
  }
  peer.kind = PeerIdentity::Kind::kCertificate;
  const std::vector<std::string> names = Properties(*auth, GRPC_X509_CN_PROPERTY_NAME);
  peer.common_name = names.empty() ? "?" : names.front();
  peer.subject_alt_names = Properties(*auth, GRPC_X509_SAN_PROPERTY_NAME);
  return peer;
}

}  // namespace stormark::agent
