#include "agent/host/memory_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/str_join.h"
#include "agent/host/sysinfo.h"
#include "common/memory_estimate.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// The process's place in the hierarchy that holds its memory controller.
struct Membership {
  int version = 0;   // 1 or 2; 0 when neither line is there.
  std::string path;  // "/system.slice/x.service", relative to the hierarchy's root.
};

// From /proc/PID/cgroup: v1's memory line when there is one (a hybrid host keeps memory in
// v1), else v2's "0::" line.
Membership ReadMembership(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  Membership v2;
  while (std::getline(in, line)) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      if (line.substr(0, first) == "0") v2 = {2, path};
      continue;
    }
    for (std::string_view c : common::Split(controllers, ',')) {
      if (c == "memory") return {1, path};
    }
  }
  return v2;
}

struct Mount {
  std::string root;   // The hierarchy's directory that is mounted ("/" mostly).
  std::string point;  // Where: "/sys/fs/cgroup/memory".
};

// The mount of the hierarchy of `version` in /proc/PID/mountinfo: "35 31 0:32 / /sys/fs/cgroup/
// memory rw,relatime - cgroup cgroup rw,memory".
std::optional<Mount> FindMount(const std::string& file, int version) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string word; fields >> word;) f.push_back(word);
    size_t dash = 0;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash < 5 || dash + 3 > f.size()) continue;
    const std::string& type = f[dash + 1];
    if (version == 2 && type != "cgroup2") continue;
    if (version == 1) {
      if (type != "cgroup") continue;
      bool memory = false;
      for (std::string_view o : common::Split(f[dash + 3], ',')) memory |= o == "memory";
      if (!memory) continue;
    }
    return Mount{UnescapeMountField(f[3]), UnescapeMountField(f[4])};
  }
  return std::nullopt;
}

std::optional<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes `text` to a cgroup file in one write(2), which is how the kernel takes it; 0 or the
// errno.
int WriteFile(const std::string& path, std::string_view text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return errno;
  const ssize_t n = write(fd, text.data(), text.size());
  const int err = n < 0 ? errno : (static_cast<size_t>(n) == text.size() ? 0 : EIO);
  close(fd);
  return err;
}

bool HasWord(std::string_view text, std::string_view word) {
  for (std::string_view w : common::Split(text, ' ')) {
    if (common::Trim(w) == word) return true;
  }
  return false;
}

// A number in a cgroup file, or in its line "KEY N" when `key` is set; 0 when absent.
uint64_t ReadCount(const std::string& path, std::string_view key = "") {
  const std::optional<std::string> text = ReadWhole(path);
  if (!text) return 0;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    std::string_view value = line;
    if (!key.empty()) {
      if (!line.starts_with(StrCat(key, " "))) continue;
      value.remove_prefix(key.size() + 1);
    }
    return std::strtoull(std::string(value).c_str(), nullptr, 10);
  }
  return 0;
}

bool HoldsNoProcess(const std::string& dir) {
  const std::optional<std::string> procs = ReadWhole(dir + "/cgroup.procs");
  return procs && common::Trim(*procs).empty();
}

// Whether the agent that named child `name` ("stormark-phase-PID-ID") is gone. A name with no
// PID in it is an earlier version's, whose agent is gone too.
bool OwnerGone(std::string_view name) {
  name.remove_prefix(PhaseMemoryCgroup::kChildPrefix.size());
  const size_t dash = name.find('-');
  if (dash == std::string_view::npos || dash == 0) return true;
  const std::string pid(name.substr(0, dash));
  if (pid.find_first_not_of("0123456789") != std::string::npos) return true;
  return kill(static_cast<pid_t>(std::strtol(pid.c_str(), nullptr, 10)), 0) != 0 && errno == ESRCH;
}

// Removes the children an earlier agent left (it was killed mid-phase) that hold no process.
// Another agent's child, between its mkdir and its move, holds no process either: a child
// whose agent is alive is left alone.
void RemoveStaleChildren(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.starts_with(PhaseMemoryCgroup::kChildPrefix) && OwnerGone(name) &&
        HoldsNoProcess(dir + "/" + name)) {
      stale.push_back(dir + "/" + name);
    }
  }
  closedir(d);
  for (const std::string& path : stale) rmdir(path.c_str());
}

std::string ErrnoText(int err) { return std::strerror(err); }

Status Unusable(std::string_view why) {
  return absl::FailedPreconditionError(StrCat("no memory cgroup can be used: ", why));
}

// Enables the memory controller for the children of v2 cgroup `dir`, moving `pid` into the
// leaf kAgentLeaf first when `dir` holds processes. Sets `home` to where `pid` now is.
Status EnableV2Memory(const std::string& dir, pid_t pid, std::string* home) {
  *home = dir;
  const std::optional<std::string> controllers = ReadWhole(dir + "/cgroup.controllers");
  if (!controllers || !HasWord(*controllers, "memory")) {
    return Unusable(StrCat("cgroup v2 ", dir,
                           " lacks the memory controller (its parent does not delegate it; under "
                           "systemd, the agent's unit needs Delegate=memory)"));
  }
  const std::optional<std::string> enabled = ReadWhole(dir + "/cgroup.subtree_control");
  if (enabled && HasWord(*enabled, "memory")) return absl::OkStatus();
  int err = WriteFile(dir + "/cgroup.subtree_control", "+memory");
  if (err == EBUSY) {
    // v2 enables a controller for children only in a cgroup with no process of its own.
    const std::string leaf = StrCat(dir, "/", PhaseMemoryCgroup::kAgentLeaf);
    if (mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
      return Unusable(StrCat("cannot make ", leaf, ": ", ErrnoText(errno)));
    }
    if (const int moved = WriteFile(leaf + "/cgroup.procs", StrCat(pid)); moved != 0) {
      return Unusable(StrCat("cannot move the agent into ", leaf, ": ", ErrnoText(moved)));
    }
    *home = leaf;
    err = WriteFile(dir + "/cgroup.subtree_control", "+memory");
    if (err == EBUSY) {
      return Unusable(StrCat("cgroup v2 ", dir,
                             " holds processes other than the agent, so it cannot enable the "
                             "memory controller for a child (run the agent in a cgroup of its "
                             "own: its systemd unit does)"));
    }
  }
  if (err != 0) {
    return Unusable(
        StrCat("cannot enable memory in ", dir, "/cgroup.subtree_control: ", ErrnoText(err)));
  }
  return absl::OkStatus();
}

}  // namespace

PhaseMemoryCgroup::PhaseMemoryCgroup(int version, std::string path, std::string home,
                                     uint64_t limit, pid_t pid)
    : version_(version),
      path_(std::move(path)),
      limit_file_(path_ + (version == 1 ? "/memory.limit_in_bytes" : "/memory.max")),
      home_(std::move(home)),
      limit_bytes_(limit),
      pid_(pid),
      oom_control_(version == 1 ? path_ + "/memory.oom_control" : ""),
      child_line_end_(path_.substr(path_.rfind('/')) + "\n"),
      applied_(limit) {}

PhaseMemoryCgroup::~PhaseMemoryCgroup() { Leave().IgnoreError(); }

uint64_t PhaseMemoryCgroup::OwnBytes() const {
  return ReadCount(path_ + "/memory.stat", version_ == 1 ? "rss" : "anon");
}

uint64_t PhaseMemoryCgroup::EffectiveLimitBytes() const {
  absl::MutexLock lock(&mu_);
  return applied_;
}

void PhaseMemoryCgroup::Follow(absl::Duration interval) {
  constexpr uint64_t kStep = uint64_t{1} << 20;
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    if (oom_kill_disabled_ && UnderOom()) Relieve();
    if (exclude_own_) {
      // Whole MiB, so that a few pages more or less do not rewrite the limit every round. A
      // lower limit than the usage makes the kernel reclaim cache down to it, which is the
      // point when the agent frees its own memory; a write the kernel refuses leaves the last
      // limit. Saturating: a limit near 2^64 (v2 reads "max" back as the number asked for)
      // plus the agent's memory must not wrap to a small limit that would have the kernel kill
      // the agent.
      const uint64_t own = common::SaturatingAdd(OwnBytes(), kStep - 1) / kStep * kStep;
      const uint64_t want =
          common::SaturatingAdd(common::SaturatingAdd(limit_bytes_, own), relief_bytes_);
      if (want != applied_ && WriteFile(limit_file_, StrCat(want)) == 0) applied_ = want;
    }
    mu_.AwaitWithTimeout(absl::Condition(&stop_), interval);
  }
}

namespace {

// Reads what fits of `path` into `buffer` (NUL-terminated) without allocating: the follower runs
// in the full cgroup, where a new page of its own would wait like the rest. "" when unreadable.
const char* ReadSmall(const char* path, char* buffer, size_t size) {
  buffer[0] = '\0';
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return buffer;
  const ssize_t n = read(fd, buffer, size - 1);
  close(fd);
  buffer[n > 0 ? n : 0] = '\0';
  return buffer;
}

}  // namespace

bool PhaseMemoryCgroup::UnderOom() const {
  char text[256];
  return std::strstr(ReadSmall(oom_control_.c_str(), text, sizeof(text)), "under_oom 1") != nullptr;
}

void PhaseMemoryCgroup::Relieve() {
  // The largest process that is not the agent, by resident pages (/proc/PID/statm's second
  // field), as the OOM killer would choose. Read into stack buffers (ReadSmall); the name is
  // read before the kill, while it is still there.
  pid_t victim = 0;
  uint64_t victim_pages = 0;
  char procs_path[4096];
  snprintf(procs_path, sizeof(procs_path), "%s/cgroup.procs", path_.c_str());
  char procs[4096];
  ReadSmall(procs_path, procs, sizeof(procs));
  for (char* next = procs; *next != '\0';) {
    char* end = nullptr;
    const long pid = strtol(next, &end, 10);  // NOLINT(runtime/int): strtol's type.
    if (end == next) break;
    next = end;
    if (pid <= 0 || static_cast<pid_t>(pid) == pid_) continue;
    char path[64], statm[128];
    snprintf(path, sizeof(path), "/proc/%ld/statm", pid);
    unsigned long size = 0, resident = 0;  // NOLINT(runtime/int): sscanf's %lu.
    if (sscanf(ReadSmall(path, statm, sizeof(statm)), "%lu %lu", &size, &resident) != 2) continue;
    if (victim == 0 || resident > victim_pages) {
      victim = static_cast<pid_t>(pid);
      victim_pages = resident;
    }
  }
  ++waits_relieved_;
  // Through a pidfd opened before the process is checked to be in the child still: a PID
  // that ended and was reused since cgroup.procs was read names another process, which the
  // check leaves alone, and one that ends after it cannot be signalled through the pidfd.
  const int pidfd = victim > 0 ? static_cast<int>(syscall(SYS_pidfd_open, victim, 0)) : -1;
  if (pidfd >= 0) {
    char path[64], comm[64], cgroups[1024];
    snprintf(path, sizeof(path), "/proc/%d/cgroup", static_cast<int>(victim));
    const bool member =
        std::strstr(ReadSmall(path, cgroups, sizeof(cgroups)), child_line_end_.c_str()) != nullptr;
    snprintf(path, sizeof(path), "/proc/%d/comm", static_cast<int>(victim));
    ReadSmall(path, comm, sizeof(comm));
    const bool stopped = member && syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) == 0;
    close(pidfd);
    if (stopped) {
      const uint64_t bytes = victim_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
      stopped_.push_back(StrCat(victim, " (", common::Trim(comm[0] != '\0' ? comm : "?"), "), ",
                                common::FormatBytes(bytes)));
      return;
    }
  }
  // The agent alone: a step of an eighth of the limit (8 MiB at least) lets its threads go on.
  const uint64_t step = std::max<uint64_t>(limit_bytes_ / 8, uint64_t{8} << 20);
  const uint64_t want = common::SaturatingAdd(applied_, step);
  if (WriteFile(limit_file_, StrCat(want)) == 0) {
    applied_ = want;
    relief_bytes_ += step;
  }
}

uint64_t PhaseMemoryCgroup::KernelPeakBytes() const {
  return version_ == 1 ? ReadCount(path_ + "/memory.kmem.max_usage_in_bytes")
                       : ReadCount(path_ + "/memory.stat", "kernel");
}

std::string PhaseMemoryCgroup::DescribeRelief() const {
  absl::MutexLock lock(&mu_);
  if (waits_relieved_ == 0) return "";
  std::string what = StrCat("the phase's memory limit of ", common::FormatBytes(limit_bytes_),
                            " was full with nothing the kernel could reclaim ",
                            common::Counted(waits_relieved_, "time", "times"), " while a thread ",
                            "waited for memory (the OOM killer is off in the phase's cgroup)");
  if (!stopped_.empty()) {
    what += StrCat(": stopped the largest program in it, as the OOM killer of a machine that ",
                   "small would: ", absl::StrJoin(stopped_, "; "));
  }
  if (relief_bytes_ > 0) {
    what += StrCat(stopped_.empty() ? ": " : "; ", "the limit was raised by ",
                   common::FormatBytes(relief_bytes_),
                   " so that the agent went on, so the page cache was held to that much more "
                   "from then on");
  }
  return what;
}

std::string PhaseMemoryCgroup::DescribeExhaustion() const {
  if (LimitHits() == 0) return "";
  return StrCat("the phase's memory limit of ", common::FormatBytes(limit_bytes_),
                " was full, up to ", common::FormatBytes(KernelPeakBytes()),
                " of it kernel memory (the inodes and directory entries of the phase's files, "
                "which the kernel cannot reclaim before they are written back): give the phase "
                "fewer files or a larger memory_limit");
}

void PhaseMemoryCgroup::StopFollowing() {
  if (!follower_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  follower_.join();
}

StatusOr<std::unique_ptr<PhaseMemoryCgroup>> PhaseMemoryCgroup::Enter(const SystemPaths& paths,
                                                                      std::string_view phase_id,
                                                                      uint64_t limit_bytes,
                                                                      const Options& options) {
  if (limit_bytes < kMinLimitBytes) {
    return absl::InvalidArgumentError(StrCat("memory_limit ", common::FormatBytes(limit_bytes),
                                             " is under ", common::FormatBytes(kMinLimitBytes),
                                             ": the agent itself runs under it"));
  }
  RETURN_IF_ERROR(common::CheckName("phase id", phase_id));
  const pid_t pid = options.pid != 0 ? options.pid : getpid();
  const Membership member = ReadMembership(paths.proc_self + "/cgroup");
  if (member.version == 0) {
    return Unusable(StrCat(paths.proc_self,
                           "/cgroup names neither a cgroup v2 nor a v1 memory "
                           "cgroup for the agent"));
  }
  const std::optional<Mount> mount = FindMount(paths.proc_self + "/mountinfo", member.version);
  if (!mount) {
    return Unusable(member.version == 1 ? "the v1 memory controller is not mounted"
                                        : "no cgroup2 filesystem is mounted");
  }
  // The agent's cgroup as this mount shows it.
  std::string relative = member.path;
  if (mount->root != "/") {
    if (!(relative == mount->root || relative.starts_with(mount->root + "/"))) {
      return Unusable(StrCat("the agent's cgroup ", member.path, " is outside what ", mount->point,
                             " mounts (", mount->root, ")"));
    }
    relative = relative.substr(mount->root.size());
  }
  if (relative.find("/..") != std::string::npos) {
    return Unusable(StrCat("the agent's cgroup path ", member.path, " is not a plain path"));
  }
  std::string dir = StrCat(mount->point, relative == "/" ? "" : relative);
  if (options.require_cgroupfs) {
    struct statfs fs {};
    const bool cgroupfs = statfs(dir.c_str(), &fs) == 0 &&
                          (fs.f_type == CGROUP_SUPER_MAGIC || fs.f_type == CGROUP2_SUPER_MAGIC);
    if (!cgroupfs) return Unusable(StrCat(dir, " is not on a cgroup filesystem"));
  }
  std::string home = dir;
  if (member.version == 2) {
    const size_t slash = dir.rfind('/');
    if (dir.substr(slash + 1) == kAgentLeaf && slash > mount->point.size()) {
      // The agent moved into its leaf at an earlier phase: the children are made beside it,
      // in the cgroup the leaf is in, which already gives them the memory controller.
      home = dir;
      dir = dir.substr(0, slash);
      std::string unused;
      RETURN_IF_ERROR(EnableV2Memory(dir, pid, &unused));
    } else {
      RETURN_IF_ERROR(EnableV2Memory(dir, pid, &home));
    }
  }
  RemoveStaleChildren(dir);
  // The agent's PID in the name: two agents in one cgroup may run the same phase id.
  const std::string child = StrCat(dir, "/", kChildPrefix, getpid(), "-", phase_id);
  if (mkdir(child.c_str(), 0755) != 0) {
    const int err = errno;
    return Unusable(err == EEXIST
                        ? StrCat(child, " is in use by processes of an earlier phase")
                        : StrCat("cannot make ", child, ": ", ErrnoText(err),
                                 err == EROFS ? " (a read-only cgroupfs: a container?)" : ""));
  }
  const std::string limit_file =
      child + (member.version == 1 ? "/memory.limit_in_bytes" : "/memory.max");
  auto undo = [&](Status status) {
    rmdir(child.c_str());
    return status;
  };
  if (const int err = WriteFile(limit_file, StrCat(limit_bytes)); err != 0) {
    return undo(Unusable(StrCat("cannot set ", limit_file, ": ", ErrnoText(err))));
  }
  uint64_t held = ReadCount(limit_file);
  if (held == 0) held = limit_bytes;  // "max" cannot be read back from what was written.
  // v1: no OOM kill in the child ("When the limit is full" in the header); a kernel without
  // the switch keeps its killer, as v2 does.
  const bool oom_kill_disabled =
      member.version == 1 && WriteFile(child + "/memory.oom_control", "1") == 0;
  if (const int err = WriteFile(child + "/cgroup.procs", StrCat(pid)); err != 0) {
    return undo(Unusable(StrCat("cannot move the agent into ", child, ": ", ErrnoText(err))));
  }
  std::unique_ptr<PhaseMemoryCgroup> cgroup(
      new PhaseMemoryCgroup(member.version, child, home, held, pid));
  cgroup->oom_kill_disabled_ = oom_kill_disabled;
  cgroup->exclude_own_ = options.exclude_own_memory;
  if (options.exclude_own_memory || oom_kill_disabled) {
    const absl::Duration interval = options.follow_interval;
    cgroup->follower_ = std::thread([raw = cgroup.get(), interval] { raw->Follow(interval); });
  }
  return cgroup;
}

Status PhaseMemoryCgroup::Leave() {
  StopFollowing();
  if (left_) return absl::OkStatus();
  if (const int err = WriteFile(home_ + "/cgroup.procs", StrCat(pid_)); err != 0) {
    return absl::InternalError(
        StrCat("cannot move the agent back to ", home_, ": ", ErrnoText(err)));
  }
  left_ = true;
  // A command phase's straggler may still be in the child; it then stays until the next
  // phase's Enter removes it.
  if (rmdir(path_.c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(StrCat("cannot remove ", path_, ": ", ErrnoText(errno)));
  }
  return absl::OkStatus();
}

uint64_t PhaseMemoryCgroup::PeakBytes() const {
  return ReadCount(path_ + (version_ == 1 ? "/memory.max_usage_in_bytes" : "/memory.peak"));
}

uint64_t PhaseMemoryCgroup::LimitHits() const {
  return version_ == 1 ? ReadCount(path_ + "/memory.failcnt")
                       : ReadCount(path_ + "/memory.events", "max");
}

}  // namespace stormark::agent
