#include "agent/config/strict_modes.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string_view>
#include <vector>

#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// As the kernel's limit on links followed in one lookup.
constexpr int kMaxLinks = 40;

// What a component is to the walk: a directory on the way, or the path's last component.
enum class Role { kAncestor, kLastDirectory, kLastFile };

// A user's name, or "" when the user database has none.
std::string UserName(uid_t uid) {
  struct passwd pw;
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return "";
  }
  return pw.pw_name;
}

// The agent's user as a chown argument and as the rule names it: "root", or the bare uid.
std::string ChownName(uid_t uid) {
  std::string name = UserName(uid);
  return name.empty() ? std::to_string(uid) : name;
}

std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// `path` as one shell word, so that a fix can be pasted.
std::string ShellWord(std::string_view path) {
  bool plain = !path.empty();
  for (char c : path) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      std::string_view("/._-+,:@%=").find(c) != std::string_view::npos;
    plain = plain && safe;
  }
  if (plain) return std::string(path);
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string Join(const std::string& dir, std::string_view name) {
  return dir == "/" ? StrCat("/", name) : StrCat(dir, "/", name);
}

void PushComponents(std::string_view path, std::deque<std::string>* pending) {
  std::vector<std::string> parts;
  for (std::string_view part : common::Split(path, '/')) {
    if (!part.empty()) parts.emplace_back(part);
  }
  pending->insert(pending->begin(), parts.begin(), parts.end());
}

bool TrustedOwner(uid_t owner, uid_t agent_uid) { return owner == 0 || owner == agent_uid; }

// Applies the rules of strict_modes.h to one component that is not a link.
Status Judge(const std::string& path, const struct stat& st, Role role, uid_t agent_uid) {
  if (role == Role::kLastDirectory && !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(StrCat(path, " is not a directory"));
  }
  if (role == Role::kLastFile && !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(StrCat(path, " is not a regular file"));
  }
  const bool owner_ok = TrustedOwner(st.st_uid, agent_uid);
  const bool writable = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  const bool sticky = (st.st_mode & S_ISVTX) != 0;
  const bool mode_ok = !writable || (role == Role::kAncestor && sticky);
  if (owner_ok && mode_ok) return absl::OkStatus();
  const std::string agent = ChownName(agent_uid);
  std::string fix;
  if (role == Role::kLastDirectory && writable && sticky) {
    // A shared directory such as /tmp is not for chmod: the target gets one of its own.
    fix = StrCat("give the target a directory of its own below it (install -d -o ", agent,
                 " -m 0755 ", ShellWord(Join(path, "stormark")), ") and name that");
  } else {
    if (!owner_ok) fix = StrCat("chown ", agent, " ", ShellWord(path));
    if (!mode_ok) fix += StrCat(fix.empty() ? "" : " && ", "chmod go-w ", ShellWord(path));
  }
  return absl::PermissionDeniedError(
      StrCat(path, " is owned by ", DescribeUser(st.st_uid), ", mode ", ModeText(st.st_mode),
             ": it must be owned by root or by the agent's user (", agent,
             ") and not writable by group or others",
             role == Role::kAncestor ? " (unless sticky, as /tmp is)" : "", "; fix: ", fix));
}

struct WalkedDir {
  Fd fd;
  std::string path;  // As walked: links resolved.
};

}  // namespace

std::string DescribeUser(uid_t uid) {
  const std::string name = UserName(uid);
  return name.empty() ? StrCat("uid ", uid) : StrCat(name, " (uid ", uid, ")");
}

StatusOr<Fd> OpenTrustedPath(const std::string& path, TrustedKind kind, uid_t agent_uid) {
  if (path.empty() || path.front() != '/') {
    return absl::InvalidArgumentError(StrCat("'", path, "' is not an absolute path"));
  }
  const Role last_role = kind == TrustedKind::kDirectory ? Role::kLastDirectory : Role::kLastFile;
  // The directories walked so far, / first: ".." pops one, an absolute link keeps only /.
  std::vector<WalkedDir> dirs;
  {
    Fd root(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (root.get() < 0) return common::ErrnoError("/", errno);
    struct stat st;
    if (fstat(root.get(), &st) != 0) return common::ErrnoError("/", errno);
    RETURN_IF_ERROR(Judge("/", st, Role::kAncestor, agent_uid));
    dirs.push_back({std::move(root), "/"});
  }
  std::deque<std::string> pending;
  PushComponents(path, &pending);
  int links = 0;
  while (!pending.empty()) {
    const std::string name = std::move(pending.front());
    pending.pop_front();
    if (name == ".") continue;
    if (name == "..") {
      if (dirs.size() > 1) dirs.pop_back();
      continue;
    }
    const std::string shown = Join(dirs.back().path, name);
    Fd fd(openat(dirs.back().fd.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0) return common::ErrnoError(shown, errno);
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return common::ErrnoError(shown, errno);
    if (S_ISLNK(st.st_mode)) {
      // A link's own mode means nothing; who made it does.
      if (!TrustedOwner(st.st_uid, agent_uid)) {
        const std::string agent = ChownName(agent_uid);
        return absl::PermissionDeniedError(
            StrCat(shown, " is a symbolic link owned by ", DescribeUser(st.st_uid),
                   ": a link on the way must be owned by root or by the agent's user (", agent,
                   "); fix: replace it with what it points to, or chown -h ", agent, " ",
                   ShellWord(shown)));
      }
      char target[PATH_MAX];
      const ssize_t n = readlinkat(fd.get(), "", target, sizeof(target));
      if (n < 0) return common::ErrnoError(StrCat("readlink ", shown), errno);
      if (n == 0 || static_cast<size_t>(n) >= sizeof(target)) {
        return absl::FailedPreconditionError(StrCat(shown,
                                                    " is a symbolic link that is empty "
                                                    "or too long"));
      }
      const std::string_view to(target, static_cast<size_t>(n));
      if (pending.empty() && kind == TrustedKind::kDirectory) {
        // Worded as agent/targets/dir/dir_target.h's OpenPhaseDir words it. The real path is a
        // hint only.
        char resolved[PATH_MAX];
        const bool known = realpath(shown.c_str(), resolved) != nullptr;
        return absl::FailedPreconditionError(
            StrCat(shown, " is a symbolic link; the agent does not follow one to a target",
                   known ? StrCat(" (configure ", resolved, " instead)") : std::string()));
      }
      if (++links > kMaxLinks) return common::ErrnoError(path, ELOOP);
      if (to.front() == '/') dirs.resize(1);
      PushComponents(to, &pending);
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      RETURN_IF_ERROR(Judge(shown, st, pending.empty() ? last_role : Role::kAncestor, agent_uid));
      dirs.push_back({std::move(fd), shown});
      continue;
    }
    if (!pending.empty()) {
      return absl::FailedPreconditionError(StrCat(shown, " is not a directory"));
    }
    RETURN_IF_ERROR(Judge(shown, st, last_role, agent_uid));
    return fd;
  }
  // The path ended with "." or ".." (or is "/"): the directory it leads to is held to the
  // stricter rule of the last component.
  WalkedDir& last = dirs.back();
  struct stat st;
  if (fstat(last.fd.get(), &st) != 0) return common::ErrnoError(last.path, errno);
  RETURN_IF_ERROR(Judge(last.path, st, last_role, agent_uid));
  return std::move(last.fd);
}

Status CheckTrustedPath(const std::string& path, TrustedKind kind, uid_t agent_uid) {
  return OpenTrustedPath(path, kind, agent_uid).status();
}

}  // namespace stormark::agent
