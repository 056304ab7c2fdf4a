// Whether this controller may start the threads a fleet needs. The fleet gives each host a
// thread of its own for Connect, Prepare and Run (and gRPC keeps a pool beside them), so a
// controller whose thread limit is below the fleet's size cannot run it concurrently. That is
// said before anything connects, naming the limit that binds: a pids cgroup's pids.max (v1 or
// v2, the controller's own cgroup or an ancestor), RLIMIT_NPROC for a user other than root, or
// the kernel's threads-max. Found later, it would read as agents that "did not answer".
#ifndef STORMARK_CONTROLLER_FLEET_THREAD_BUDGET_H_
#define STORMARK_CONTROLLER_FLEET_THREAD_BUDGET_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace stormark::controller {

// Threads a run needs beside one per host: gRPC's pool, heartbeats, the progress line. A run of
// 40 hosts peaked at 55 threads (the pids cgroup's count), so 15 beside them, and a margin.
inline constexpr size_t kThreadsBesideHosts = 24;

// Where the limits are read; tests point them at a fake tree.
struct ThreadLimitPaths {
  std::string proc_self_cgroup = "/proc/self/cgroup";
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string threads_max = "/proc/sys/kernel/threads-max";
  std::string loadavg = "/proc/loadavg";
  // RLIMIT_NPROC binds only users other than root; tests set it.
  std::optional<int64_t> nproc_limit;
  int64_t nproc_used = 0;
};

struct ThreadLimit {
  int64_t room = 0;  // threads that may still be started
  std::string what;  // "pids.max 30 of cgroup /batch (28 in use)"
};

// The limit with the least room, or nullopt when none applies.
std::optional<ThreadLimit> TightestThreadLimit(const ThreadLimitPaths& paths);

// The real limits of this process (RLIMIT_NPROC and the threads of its user read when it is not
// root).
ThreadLimitPaths SystemThreadLimits();

// OK when the tightest limit leaves room for `hosts` + kThreadsBesideHosts threads, else one
// line naming that limit, what it leaves and what the fleet needs.
common::Status CheckThreadBudget(size_t hosts, const ThreadLimitPaths& paths);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_THREAD_BUDGET_H_
