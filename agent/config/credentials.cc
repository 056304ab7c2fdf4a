#include "agent/config/credentials.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>

#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::StrCat;

// A passwd entry copied out of getpw*_r's buffer.
struct PasswdEntry {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
};

// By name when `name` is non-null, else by `uid`. NOT_FOUND when there is no such entry.
common::StatusOr<PasswdEntry> LookUpPasswd(const char* name, uid_t uid) {
  std::vector<char> buffer(16384);
  for (;;) {
    struct passwd pw;
    struct passwd* found = nullptr;
    const int rc = name != nullptr ? getpwnam_r(name, &pw, buffer.data(), buffer.size(), &found)
                                   : getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE && buffer.size() < (size_t{1} << 22)) {
      buffer.resize(buffer.size() * 4);
      continue;
    }
    if (rc != 0) return common::ErrnoError("the user database", rc);
    if (found == nullptr) return absl::NotFoundError("no such user");
    return PasswdEntry{pw.pw_name, pw.pw_uid, pw.pw_gid, pw.pw_dir != nullptr ? pw.pw_dir : "/"};
  }
}

std::vector<gid_t> GroupsOf(const std::string& name, gid_t primary) {
  int count = 32;
  std::vector<gid_t> groups;
  for (int attempt = 0; attempt < 8; ++attempt) {
    groups.resize(static_cast<size_t>(count));
    int n = count;
    if (getgrouplist(name.c_str(), primary, groups.data(), &n) >= 0) {
      groups.resize(static_cast<size_t>(n));
      return groups;
    }
    count = n > count ? n : count * 2;  // n holds the number needed.
  }
  return {primary};
}

}  // namespace

common::StatusOr<Credentials> LookUpCommandUser(std::string_view configured) {
  const uid_t self = geteuid();
  if (self != 0) {
    // An unprivileged agent cannot become anyone else; its commands are no more privileged
    // than it is.
    auto entry = LookUpPasswd(nullptr, self);
    const std::string self_name = entry.ok() ? entry->name : StrCat(self);
    if (!configured.empty() && configured != self_name) {
      return absl::FailedPreconditionError(
          StrCat("commands.user '", configured, "': this agent runs as ", self_name, " (uid ", self,
                 "), not root, and cannot switch users; remove commands.user or set it to '",
                 self_name, "'"));
    }
    Credentials own;
    own.name = self_name;
    own.uid = self;
    own.gid = getegid();
    own.home = entry.ok() ? entry->home : "/";
    own.switch_user = false;
    return own;
  }
  const std::string name = configured.empty() ? kDefaultCommandUser : std::string(configured);
  auto entry = LookUpPasswd(name.c_str(), 0);
  if (!entry.ok()) {
    return absl::Status(entry.status().code(),
                        StrCat("commands.user '", name, "': ", entry.status().message(),
                               configured.empty() ? " (nobody is the default; name an "
                                                    "unprivileged user that exists)"
                                                  : ""));
  }
  Credentials creds;
  creds.name = entry->name;
  creds.uid = entry->uid;
  creds.gid = entry->gid;
  creds.home = entry->home;
  creds.groups = GroupsOf(entry->name, entry->gid);
  creds.switch_user = entry->uid != 0;
  return creds;
}

}  // namespace stormark::agent
