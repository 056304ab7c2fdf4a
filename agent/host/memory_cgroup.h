// A memory cgroup for one phase (PhaseSpec.memory_limit_bytes): the page cache the phase makes
// is held to the limit, as on a machine with that much RAM. This is the `mem=256M` boot option
// that bonnie++ users reach for, without a reboot.
//
// Why the whole agent moves. Memory is charged to a process's cgroup, never to one thread's:
// cgroup v1 charges by the process's memory map, and cgroup v2's threaded mode has no memory
// controller. The workload's threads are the agent's, so the agent process itself moves into a
// child of its own cgroup for the phase, from its set-up to its cleanup (the agent runs one
// phase at a time), and moves back after. Every page the phase's I/O brings into the page
// cache, and every process a command phase starts, is then charged to the child. What was
// charged before the move stays where it was: the agent's own memory, and pages another phase
// left in the cache (use `cache: drop` to start without them). What the agent allocates while
// the phase is held is charged to the child too, and added to its limit (below).
//
// What the limit holds. The limit stands for a machine's RAM as a page cache sees it: the
// phase's page cache and the kernel's caches of its files (inodes, dentries). The agent's own
// memory, the phase's buffers and its tables (bonnie's file tests keep every name twice, once
// for the test and once for the phase directory's checks: 27 MiB at 256 x 1024 files) and the
// RPC threads', is not the storage's business, and a reference tool that keeps less would get
// more cache from the same limit: measured at a 256 MiB limit, bonnie++'s stat tests ran 1.3-1.6x
// faster than the agent's until the agent's 54 MiB were added back. With
// Options.exclude_own_memory, a thread of this class reads the child's anonymous memory every
// Options.follow_interval and sets the kernel's limit to limit_bytes() plus that (in whole MiB),
// so the caches are held to limit_bytes() whatever the agent allocates. A command phase's
// programs are not the agent: their memory stays under the limit, as on a machine that small.
//
// When the limit is full of what the kernel cannot reclaim. The inodes and directory entries
// of files not yet written back cannot be freed, and ext4 allocates inodes without leave to
// reclaim the ones that could be (GFP_NOFS): a phase that creates more files than the limit
// holds fills it with them (measured on ext4: about 1.3 KiB a file, so 64 MiB fills at about
// 48,000 files), and the kernel's memory-cgroup OOM killer then kills a process in the cgroup,
// which was the agent. bonnie++ in a cgroup of that limit is killed the same way. A real
// machine with that much RAM does not kill for such an allocation; it waits for the flusher. So
// on v1 the child's OOM killer is turned off (memory.oom_control): an allocation in a system
// call that finds nothing to reclaim fails with ENOMEM, which fails the phase with a line that
// says why (DescribeExhaustion), and a page fault waits instead. A follower thread watches for
// waiters (under_oom): it stops the largest process of the child that is not the agent (a
// command phase's program, as the OOM killer of a machine that small would), or, when the agent
// alone is there, raises the limit by a step so that the agent's threads go on; both are
// counted and said in the result. v2 has no such switch: the kernel may still kill the agent
// there. The policy refuses beforehand a phase whose files cannot fit (policy.h,
// kKernelBytesPerFile).
//
// v1 (a `cgroup` mount with the memory controller): the child is made next to the agent in
// that hierarchy, with memory.limit_in_bytes. v2 (`cgroup2`): the child needs the memory
// controller enabled in its parent's cgroup.subtree_control, which v2 allows only in a cgroup
// that holds no process. When the agent's cgroup holds the agent, the agent first moves into
// a leaf of its own, `stormark-agent`, and stays there; later phases' children are made beside
// that leaf. A cgroup that holds other processes too cannot be used. Under systemd the unit must
// delegate its cgroup (Delegate=memory).
//
// The cgroup filesystem's files are the kernel's: a directory that is not on cgroupfs (a path
// someone bind-mounted over) is refused.
#ifndef STORMARK_AGENT_HOST_MEMORY_CGROUP_H_
#define STORMARK_AGENT_HOST_MEMORY_CGROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/host/system_paths.h"
#include "common/status.h"

namespace stormark::agent {

class PhaseMemoryCgroup {
 public:
  // The smallest limit accepted: the agent's own threads allocate under it while the phase is
  // held, and a limit below what they need would have the kernel kill the agent.
  static constexpr uint64_t kMinLimitBytes = uint64_t{32} << 20;
  // Children are named this, then the agent's PID, '-' and the phase id.
  static constexpr std::string_view kChildPrefix = "stormark-phase-";
  // The leaf a v2 agent moves into so that its own cgroup can enable the memory controller.
  static constexpr std::string_view kAgentLeaf = "stormark-agent";

  struct Options {
    // The process that moves: the agent. Tests move a child they started.
    pid_t pid = 0;  // 0: this process.
    // Refuse a cgroup directory that is not on a cgroup filesystem. Off only for tests on
    // fake trees.
    bool require_cgroupfs = true;
    // Hold the caches, not the agent's own memory, to the limit (see "What the limit holds").
    bool exclude_own_memory = false;
    absl::Duration follow_interval = absl::Milliseconds(100);
  };

  // Makes the child cgroup `kChildPrefix` + PID + "-" + `phase_id` of the process's own memory
  // cgroup (PID: the agent's, which names the child whichever process moves),
  // sets its limit to `limit_bytes` and moves the process into it, every thread at once.
  // `paths.proc_self` names the process's cgroup and mountinfo files. FAILED_PRECONDITION,
  // with one line saying why, when no memory cgroup can be used (no controller mounted, not
  // delegated, another process in the way, a read-only cgroupfs); INVALID_ARGUMENT for a
  // limit under kMinLimitBytes. Leftover children of an agent that is gone, holding no
  // process, are removed first.
  static common::StatusOr<std::unique_ptr<PhaseMemoryCgroup>> Enter(const SystemPaths& paths,
                                                                    std::string_view phase_id,
                                                                    uint64_t limit_bytes,
                                                                    const Options& options);
  static common::StatusOr<std::unique_ptr<PhaseMemoryCgroup>> Enter(const SystemPaths& paths,
                                                                    std::string_view phase_id,
                                                                    uint64_t limit_bytes) {
    return Enter(paths, phase_id, limit_bytes, Options());
  }

  // Leave()s, ignoring its error.
  ~PhaseMemoryCgroup();
  PhaseMemoryCgroup(const PhaseMemoryCgroup&) = delete;
  PhaseMemoryCgroup& operator=(const PhaseMemoryCgroup&) = delete;

  // Moves the process back to the cgroup it came from and removes the child. What the phase
  // charged stays charged to the removed child until the kernel reclaims it (v2) or moves to
  // the parent (v1). Idempotent.
  common::Status Leave();

  // 1 or 2.
  int version() const { return version_; }
  // The child's directory: "/sys/fs/cgroup/memory/system.slice/stormark-phase-p1".
  const std::string& path() const { return path_; }
  // The limit asked for, as the kernel held it when it was set (v1 rounds it down to whole
  // pages): what the page cache and the kernel's caches may hold.
  uint64_t limit_bytes() const { return limit_bytes_; }
  // The anonymous memory charged to the child now (v1 memory.stat rss, v2 anon); 0 when
  // unknown.
  uint64_t OwnBytes() const;
  // The limit the kernel holds now: limit_bytes(), plus the own memory last added when it is
  // excluded.
  uint64_t EffectiveLimitBytes() const;
  // The most the child has held so far (v1 memory.max_usage_in_bytes, v2 memory.peak where
  // the kernel has it); 0 when unknown.
  uint64_t PeakBytes() const;
  // How many times an allocation hit the limit (v1 memory.failcnt, v2 memory.events "max").
  uint64_t LimitHits() const;
  // The most kernel memory (inodes, directory entries and the kernel's other objects) the
  // child has held (v1 memory.kmem.max_usage_in_bytes), or on v2 what it holds now (memory.stat
  // kernel; v2 keeps no peak of it); 0 when unknown. Read at once after an ENOMEM, "now" may
  // already be much less: the flusher makes inodes reclaimable.
  uint64_t KernelPeakBytes() const;
  // Whether the kernel's OOM killer is off in the child (v1; see "When the limit is full").
  bool oom_kill_disabled() const { return oom_kill_disabled_; }
  // What the follower did when a thread waited for memory the kernel could not find: "" when
  // nothing; else one line for the phase's result ("the phase's memory limit of 64 MiB was
  // full 2 times: ... the limit was raised by 16 MiB so that the agent went on").
  std::string DescribeRelief() const;
  // One line on why an allocation failed with ENOMEM in the phase, for its error: the limit,
  // how much of it was kernel memory, and what to change; "" when the limit was never hit.
  std::string DescribeExhaustion() const;

 private:
  PhaseMemoryCgroup(int version, std::string path, std::string home, uint64_t limit, pid_t pid);

  // The follower thread's loop: sets the kernel's limit to limit_bytes_ + OwnBytes() until
  // stop_.
  void Follow(absl::Duration interval);
  // Stops and joins the follower, if there is one.
  void StopFollowing();
  // Whether a thread of the child waits for memory now (v1 memory.oom_control under_oom).
  // Reads into a stack buffer: the follower must not need a new page of its own while the
  // child is full.
  bool UnderOom() const;
  // Ends a wait for memory: SIGKILLs the largest process of the child that is not pid_, or
  // raises the limit by a step when there is none.
  void Relieve() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int version_;
  const std::string path_;
  const std::string limit_file_;
  const std::string home_;  // Where the process goes back to.
  const uint64_t limit_bytes_;
  const pid_t pid_;
  const std::string oom_control_;  // v1's memory.oom_control, "" on v2.
  // How a member's /proc/PID/cgroup line ends: "/stormark-phase-...\n".
  const std::string child_line_end_;
  bool left_ = false;
  bool oom_kill_disabled_ = false;  // Set by Enter before the process moves.
  bool exclude_own_ = false;        // Options.exclude_own_memory.

  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t applied_ ABSL_GUARDED_BY(mu_);  // The limit last written.
  int waits_relieved_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t relief_bytes_ ABSL_GUARDED_BY(mu_) = 0;         // Added to the limit by Relieve.
  std::vector<std::string> stopped_ ABSL_GUARDED_BY(mu_);  // "PID (comm), 40 MiB".
  std::thread follower_;  // Started by Enter, joined by StopFollowing.
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_HOST_MEMORY_CGROUP_H_
