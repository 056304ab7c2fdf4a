#include "controller/fleet/thread_budget.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::StrCat;

// The first word of a file, or "" when it cannot be read.
std::string FirstWord(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  in >> word;
  return word;
}

std::optional<int64_t> Number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == nullptr || *end != '\0' || v < 0) return std::nullopt;
  return static_cast<int64_t>(v);
}

void Consider(std::optional<ThreadLimit>* tightest, int64_t room, std::string what) {
  if (!*tightest || room < (*tightest)->room) *tightest = ThreadLimit{room, std::move(what)};
}

// The pids.max of `cgroup` under `base` and of each ancestor below the root, which has none.
void ConsiderPidsCgroup(const std::string& base, std::string cgroup,
                        std::optional<ThreadLimit>* tightest) {
  while (!cgroup.empty() && cgroup != "/") {
    const std::string dir = StrCat(base, cgroup);
    const std::optional<int64_t> max = Number(FirstWord(dir + "/pids.max"));  // "max": none
    const std::optional<int64_t> current = Number(FirstWord(dir + "/pids.current"));
    if (max && current) {
      Consider(tightest, *max - *current,
               fmt::format("pids.max {} of cgroup {} ({} in use)", *max, cgroup, *current));
    }
    const size_t slash = cgroup.rfind('/');
    cgroup = slash == 0 || slash == std::string::npos ? "" : cgroup.substr(0, slash);
  }
}

// Threads in use by processes of `uid`, from /proc: what RLIMIT_NPROC counts.
int64_t ThreadsOfUser(uid_t uid) {
  int64_t threads = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  while (const dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream in(StrCat("/proc/", e->d_name, "/status"));
    bool mine = false;
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("Uid:")) {
        std::istringstream fields(line.substr(4));
        long long real = -1;
        fields >> real;
        mine = real == static_cast<long long>(uid);
      } else if (mine && line.starts_with("Threads:")) {
        threads += std::strtoll(line.c_str() + 8, nullptr, 10);
      }
    }
  }
  closedir(proc);
  return threads;
}

}  // namespace

std::optional<ThreadLimit> TightestThreadLimit(const ThreadLimitPaths& paths) {
  std::optional<ThreadLimit> tightest;
  std::ifstream cgroups(paths.proc_self_cgroup);
  for (std::string line; std::getline(cgroups, line);) {
    // hierarchy-id:controllers:path
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty() && line.starts_with("0:")) {
      // The unified hierarchy: at the root of /sys/fs/cgroup, or beside v1 under unified/.
      for (const std::string& base : {paths.cgroup_root, paths.cgroup_root + "/unified"}) {
        if (access((base + "/cgroup.controllers").c_str(), F_OK) == 0) {
          ConsiderPidsCgroup(base, path, &tightest);
          break;
        }
      }
      continue;
    }
    for (const std::string_view c : common::Split(controllers, ',')) {
      if (c == "pids") ConsiderPidsCgroup(paths.cgroup_root + "/pids", path, &tightest);
    }
  }
  if (const auto max = Number(FirstWord(paths.threads_max))) {
    // /proc/loadavg: "0.50 0.40 0.30 2/345 6789", the fourth field runnable/total threads.
    const std::string entities = [&] {
      std::ifstream in(paths.loadavg);
      std::string a, b, c, d;
      in >> a >> b >> c >> d;
      return d;
    }();
    const size_t slash = entities.find('/');
    const auto total =
        slash == std::string::npos ? std::nullopt : Number(entities.substr(slash + 1));
    if (total) {
      Consider(&tightest, *max - *total,
               fmt::format("kernel.threads-max {} ({} threads on this machine)", *max, *total));
    }
  }
  if (paths.nproc_limit) {
    Consider(&tightest, *paths.nproc_limit - paths.nproc_used,
             fmt::format("ulimit -u {} ({} threads of this user)", *paths.nproc_limit,
                         paths.nproc_used));
  }
  return tightest;
}

ThreadLimitPaths SystemThreadLimits() {
  ThreadLimitPaths paths;
  rlimit limit{};
  if (geteuid() != 0 && getrlimit(RLIMIT_NPROC, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    paths.nproc_limit = static_cast<int64_t>(limit.rlim_cur);
    paths.nproc_used = ThreadsOfUser(geteuid());
  }
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Threads:"))
      paths.own_threads = std::strtoll(line.c_str() + 8, nullptr, 10);
  }
  return paths;
}

common::Status CheckThreadBudget(const ThreadLimitPaths& paths) {
  const std::optional<ThreadLimit> limit = TightestThreadLimit(paths);
  // The threads it has already (gRPC starts some with the channels) count towards its need.
  const int64_t needed = std::max<int64_t>(
      0, static_cast<int64_t>(kControllerThreads) - std::max<int64_t>(paths.own_threads, 1));
  if (!limit || limit->room >= needed) return absl::OkStatus();
  return absl::ResourceExhaustedError(fmt::format(
      "the controller may start {} more threads ({}), and it needs about {} more ({} in all, "
      "whatever the number of hosts): raise that limit",
      std::max<int64_t>(limit->room, 0), limit->what, needed, kControllerThreads));
}

}  // namespace stormark::controller
