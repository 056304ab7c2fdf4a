// Whether this controller may start the threads it needs. The fleet holds no thread per host
// (its calls are gRPC callbacks: fleet.h), so the need is a constant: gRPC's own pools, the
// heartbeat monitor, the progress line. A limit below even that (a pids cgroup's pids.max, v1
// or v2, the controller's own cgroup or an ancestor; RLIMIT_NPROC for a user other than root;
// the kernel's threads-max) is said before anything connects, naming the limit that binds.
// Found later, it would read as agents that "did not answer".
#ifndef STORMARK_CONTROLLER_FLEET_THREAD_BUDGET_H_
#define STORMARK_CONTROLLER_FLEET_THREAD_BUDGET_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace stormark::controller {

// Threads a run needs, whatever the number of hosts: gRPC's pools, heartbeats, the progress
// line. bench/scale.py saw a peak of 16 at 100 hosts and 21 at 500; the rest is margin.
inline constexpr size_t kControllerThreads = 32;

// Where the limits are read; tests point them at a fake tree.
struct ThreadLimitPaths {
  std::string proc_self_cgroup = "/proc/self/cgroup";
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string threads_max = "/proc/sys/kernel/threads-max";
  std::string loadavg = "/proc/loadavg";
  // RLIMIT_NPROC binds only users other than root; tests set it.
  std::optional<int64_t> nproc_limit;
  int64_t nproc_used = 0;
  // Threads this process has already, which count towards kControllerThreads.
  int64_t own_threads = 1;
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

// OK when the tightest limit leaves room for the threads the controller lacks of
// kControllerThreads, else one line naming that limit, what it leaves and what the controller
// needs.
common::Status CheckThreadBudget(const ThreadLimitPaths& paths);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_THREAD_BUDGET_H_
