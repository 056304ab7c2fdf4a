// The agent's configuration: what this host allows. Only targets named here can be used,
// and a request names a target, never a path.
//
//   # /etc/stormark/agent.yaml
//   targets:
//     scratch:            # the name controllers use
//       dir: /srv/bench   # an existing directory; phases create and remove files in it.
//                         # It and every directory above it must be owned by root or the
//                         # agent's user and not writable by group or others (sticky ones
//                         # such as /tmp excepted above it): agent/config/strict_modes.h, checked
//                         # at start (a warning) and before each phase (a refusal)
//       # strict_modes: false  # skips that check for this target only, with a warning at
//                              # start: for a root-squashed NFS export, whose directory
//                              # must belong to nobody
//       # device: /dev/sdb  # the disk its filesystem is on (or a setup hook puts it on):
//                           # plans may tune it (allow_tuning), and hooks get it as
//                           # $STORMARK_TARGET_DEVICE. Without it, neither: the disk under
//                           # a directory is shared, often the host's root disk
//     disk1:
//       block: /dev/sdb   # a raw block device, or a regular file (created if missing;
//                         # a file and its directories are checked as a dir target is)
//       size: 100G        # optional for a device (default: all of it), needed for a new file
//       disposable: true  # workloads may write to it; without this, reads only
//     shelf:
//       aoe: aoe://eth1/1.0  # an ATA-over-Ethernet target (shelf 1, slot 0 behind eth1),
//                            # reached with stormark's own initiator (needs CAP_NET_RAW)
//       disposable: true     # needed for writes; size: optional limit
//     ceiling:
//       null: true        # the null device: measures stormark's own cost
//       size: 1T          # its addressable size (default 1 TiB)
//     export1:
//       nbd: nbds://10.0.0.5:10809/scratch   # or nbd://..., nbd+unix:///EXPORT?socket=PATH
//       disposable: true
//       tls: {certificates: /etc/stormark/nbd-pki}   # or {psk_file: PATH, username: NAME}
//     lun0:
//       iscsi: iscsi://10.0.0.6:3260/iqn.2003-01.org.example:disk1/0
//       chap: {user: bench, password_file: /etc/stormark/chap.secret}  # initiator: IQN
//   commands:             # the `command` workload and plan hooks: off unless enabled here
//     enabled: true
//     user: nobody                   # default; whom they run as (root must be written out)
//     allow:                         # optional: only argument vectors these rules match
//       - [tar, -xf, "*.tar"]        # (see agent/config/command_policy.h)
//   allow_drop_caches: true          # default; false refuses `cache: drop` (it warns)
//   allow_tuning: false              # default; true lets plans set the scheduler,
//                                    # read_ahead_kb, nr_requests and queue_depth of a
//                                    # target's device (restored after each phase)
//   stuck_worker_after: 10s          # default; a stopped phase whose worker is still in the
//                                    # kernel (state D) this long after is reported stuck
//   stalled_io_after: 120s           # default; no I/O completed for this long while a
//                                    # worker sits in the kernel stops the phase as stalled
//   tls: ..., scratch: ..., limits: ...  # see agent/config/policy.h
//   identities: ...                      # who may do what; see agent/access/authz.h
//   access: {users: [...], groups: [...]}  # who may use the unix socket; see agent/access/access.h
#ifndef STORMARK_AGENT_CONFIG_CONFIG_H_
#define STORMARK_AGENT_CONFIG_CONFIG_H_

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "agent/access/authz.h"
#include "agent/access/access.h"
#include "agent/config/command_policy.h"
#include "agent/config/policy.h"
#include "common/spec_check.h"
#include "common/status.h"

namespace stormark::agent {

// TLS for an nbds:// target: one of certificates or psk_file.
struct NbdTlsConfig {
  // A directory with ca-cert.pem (and client-cert.pem, client-key.pem).
  std::string certificates;
  // A PSK file (psktool's format) and the user name in it ("stormark" when not given).
  std::string psk_file;
  std::string username;
};

// iSCSI login settings. The password is read from password_file when the target is opened.
struct ChapConfig {
  std::string user;  // Empty: no CHAP.
  std::string password;
  std::string password_file;
  // The initiator's IQN; empty for stormark's default.
  std::string initiator;
};

// What the agent learnt of a network target the last time it reached it, so that GetInfo
// answers without connecting each time. Shared by every copy of the TargetConfig.
struct NetTargetCache {
  absl::Mutex mu;
  uint64_t size ABSL_GUARDED_BY(mu) = 0;  // 0 until reached.
  uint32_t block_size ABSL_GUARDED_BY(mu) = 0;
  int64_t failed_at_nanos ABSL_GUARDED_BY(mu) = 0;  // Monotonic time of the last failed attempt.
  std::string error ABSL_GUARDED_BY(mu);
};

struct TargetConfig {
  // [A-Za-z0-9._-], 1 to 64 characters.
  std::string name;
  // The name of its kind, one of agent/targets/target_kind.h's TargetKinds(): "dir", "block",
  // "aoe", "null", "nbd" or "iscsi". What a kind does is asked of the registry or of CapsOf
  // (agent/targets/target_caps.h), never decided by testing this name.
  std::string kind;
  // Absolute path of the directory, or of the block device or file; the aoe:// address of an
  // AoE target; the URI of an nbd or iscsi target (never with credentials in it); empty for
  // null.
  std::string path;
  // Block, aoe, null, nbd, iscsi: the bytes workloads may address; 0 means all of the device.
  uint64_t size = 0;
  // Block, aoe, nbd, iscsi: workloads may write to it (the data on it is disposable).
  bool disposable = false;
  // nbd: TLS settings (empty for no TLS, or the system's CAs with an nbds:// URI).
  NbdTlsConfig tls{};
  // iscsi: CHAP and the initiator name.
  ChapConfig chap{};
  // aoe, nbd, iscsi: how long a request may wait for the server before it fails (AoE: since
  // its first transmission, and a target silent for half of it is given up on; nbd, iscsi:
  // with no completion at all on the connection); 0 for the default (10 s AoE, 30 s nbd and
  // iscsi). Config key `io_timeout`.
  int64_t io_timeout_nanos = 0;
  // aoe: discovery (Query Config and IDENTIFY; default 2 s); nbd, iscsi: connecting, TLS and
  // login (default 10 s); 0 for the default. Config key `connect_timeout`.
  int64_t connect_timeout_nanos = 0;
  // nbd, iscsi: what was learnt when it was last reached.
  std::shared_ptr<NetTargetCache> cache{};
  // dir, and block on a regular file: its owner and mode, and those of the directories above
  // it, are checked before each phase (agent/config/strict_modes.h). Config key `strict_modes`.
  bool strict_modes = true;
  // dir, and block on a regular file: the block device the target's filesystem is on, or
  // that a plan's setup hook formats and mounts there (config key `device`). Such a
  // target's disk is otherwise unknown and may be shared, often the host's root disk: a
  // plan's tuning is refused unless the config names it here (and the phase checks that
  // the filesystem really is on it), and hooks get it, never a guess, as
  // $STORMARK_TARGET_DEVICE.
  std::string device{};
};

// The size of a null target that gives none.
inline constexpr uint64_t kDefaultNullSize = uint64_t{1} << 40;

struct AgentConfig {
  std::vector<TargetConfig> targets;
  CommandPolicy commands;
  // Whether a phase may drop the host's page cache (it slows every other user of the host
  // for a while).
  bool allow_drop_caches = true;
  // Whether a phase may change the block-queue settings of a target's device.
  bool allow_tuning = false;
  // After a phase is told to stop (abort, deadline, controller gone), how long its workload
  // may take to return before a worker that sits in the kernel in state D (an I/O to a dead
  // network disk, axboe/fio#1004) is reported stuck: the phase is then FAILED, the thread is
  // left behind, and the agent takes no new phase until the thread comes back.
  int64_t stuck_worker_after_nanos = int64_t{10} * 1'000'000'000;
  // A running phase in which no I/O has completed for this long while one of its threads is
  // in state D is stopped as stalled (then the rule above applies).
  int64_t stalled_io_after_nanos = int64_t{120} * 1'000'000'000;
  // agent/config/policy.h: mutual TLS files (empty: plain text), the directories dir targets must
  // lie under (empty: anywhere), and per-phase caps.
  TlsConfig tls;
  std::vector<std::string> scratch;
  ResourceLimits limits;
  // agent/access/authz.h: what each identity may do; empty (no `identities:`) lets every caller the
  // transport admits do everything.
  std::vector<IdentityRule> identities;
  // agent/access/access.h: who may use the unix socket besides root and the agent's own user.
  AccessConfig access;
  // The user the agent runs as: what it trusts (dir targets, the config and TLS files, the
  // programs commands run) must be owned by root or by this user (agent/config/strict_modes.h). Not
  // a config key; the process's effective uid unless a test says otherwise.
  uid_t agent_uid = geteuid();

  // The target called `name`, or nullptr.
  const TargetConfig* FindTarget(std::string_view name) const;
  // "scratch, fast" or "(none)".
  std::string TargetNames() const;
};

// Parses a configuration. `source` names it in errors, which read
// "agent.yaml:4: target 'scratch': directory /nope does not exist".
common::StatusOr<AgentConfig> ParseAgentConfig(std::string_view yaml, std::string_view source);

// Reads and parses a configuration file.
common::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path);

using common::IsValidName;

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_CONFIG_CONFIG_H_
