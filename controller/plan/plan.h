// What to run: the phases, in order, and optionally the agents. Comes from a small YAML plan
// file or from command-line flags, and is validated completely before anything runs.
//
//   agents: [ "db1:7420", "db2:7420" ]   # optional; --agent replaces it
//   hosts:                               # or, with names, labels and targets:
//     - {name: local, address: "db1:7420", target: nvme, labels: {transport: local}}
//     - {name: x, address: "10.0.0.7:7420", tls_name: db3}   # the name its certificate holds
//   agents_dns: "stormark-agent.bench.svc:7420"  # or: every address this name resolves to
//   inventory: hosts.ini                 # or: the hosts of an Ansible inventory (INI or YAML)
//   tls: {ca: pki/ca.crt, cert: pki/controller.crt, key: pki/controller.key}  # mutual TLS
//     - {name: aoe, address: "db2:7420", target: etherd, labels: {transport: aoe}}
//   target: scratch                      # optional default target for every phase
//   mode: concurrent                     # or sequential: one host at a time
//   repeat: 3                            # each phase 3 times per sweep point
//   sweep:                               # every combination, last axis fastest
//     read_ahead_kb: [128, 1024, 4096]   # a tuning knob, applied and restored by the agent
//     bs: [64k, 1M]                      # a workload parameter
//   setup: ["mkfs.xfs -f -d agcount={agcount} /dev/md0", "mount /dev/md0 /srv/bench"]
//   teardown: ["umount /srv/bench"]      # hooks, per sweep point, on every agent
//   cache: drop                          # before each timed region: keep (default), sync,
//                                        # or drop (sync, then drop the page cache)
//   heartbeat: {interval: 2s, timeout: 10s}  # the defaults: a host silent for the timeout
//                                        # is failed, and its agent drops the phase
//   deadline: 10m                        # abort a phase still running this long after
//                                        # its start on a host (a phase may set its own)
//   prepare_deadline: 30m                # fail a phase whose set-up (Prepare) has not
//                                        # finished this long after it began on a host
//                                        # (default 5 min + 1 s per 16 MiB of its size)
//   start_spread_limit: 1%               # the all-hosts figures are INVALID when the hosts'
//                                        # start spread + clock error exceeds this share of
//                                        # the phase (a phase may set its own)
//   phases:
//     - name: seq-write
//       workload: stream
//       rw: write
//       size: 1G
//       bs: 1M
//       fdatasync: true
//       cache: keep                      # a phase may set its own
//     - name: bonnie
//       workload: bonnie                 # parameters: controller/workloads/bonnie_params.h
//       files: 16:0:0:1
//     - name: pm
//       workload: postmark               # parameters: controller/workloads/postmark_params.h
//       config: pm.cfg                   # a PostMark script, relative to this plan; one
//       transactions: 1000               # phase per `run` in it (pm-1, pm-2, ...); the
//                                        # phase's own parameters override the script's
#ifndef STORMARK_CONTROLLER_PLAN_PLAN_H_
#define STORMARK_CONTROLLER_PLAN_PLAN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/tls.h"
#include "controller/plan/plan_sweep.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

struct PhasePlan {
  // Shown in tables; [A-Za-z0-9._-].
  std::string name;
  // Which run of the phase this is, 0-based (`repeat: N` runs each phase N times).
  int repetition = 0;
  // The sweep point this run of the phase belongs to.
  SweepPoint sweep_point;
  // An agent target name; empty means "the agent's only target".
  std::string target;
  // The workload; phase_id and target are filled in per run and host.
  stormark::v1::PhaseSpec spec;
  // `deadline:`: abort the phase on a host still running this long after its start; 0 means
  // the default (see controller/fleet/phase_deadline.h).
  int64_t deadline_nanos = 0;
  // `prepare_deadline:`: fail the phase on a host whose Prepare (its untimed set-up, such as
  // laying out the file) has not finished this long after it began; 0 means the default
  // (see PrepareDeadline in controller/fleet/phase_deadline.h).
  int64_t prepare_deadline_nanos = 0;
  // `start_spread_limit:`: the aggregate of a phase on several hosts is INVALID when their
  // start spread plus the clock uncertainty exceeds this share of the shortest host's timed
  // region (controller/report/validity.h). 0 means the default, 1%.
  double start_spread_limit = 0;
  // A teardown hook after an interrupt or --fail-fast (controller/run/run_hooks.h): it runs
  // although the fleet is halted. Never set from a plan file.
  bool runs_after_halt = false;

  // A phase of a fio job file that differs by host (controller/fio/fio_hosts.h): where it was
  // read from, and what that reading gave before the plan's own settings went on.
  struct FioOrigin {
    std::string path;
    std::vector<std::string> sections;
    size_t index = 0;  // Among the file's phases,
    std::string name;  // and its name there.
    stormark::v1::PhaseSpec spec;
    std::string target;
  };
  std::shared_ptr<const FioOrigin> fio_origin;
  // Host i's own spec and target (by its index in the plan's hosts), when it differs; every
  // other host runs `spec` on `target`.
  std::map<size_t, stormark::v1::PhaseSpec> host_specs;
  std::map<size_t, std::string> host_targets;

  // The interval logs fio's write_bw_log, write_lat_log and write_iops_log ask for, of a phase
  // read from a job file: one entry per job of the phase (its spec's own, then its group's),
  // none when no job asks. controller/fio/fio_logs.h writes them after the run.
  struct FioLog {
    std::string job;            // fio's job name
    std::string bw, lat, iops;  // the logs' prefixes; empty when not asked
    int thread_number = 1;      // fio's job number, the x of NAME_bw.x.log
    int clones = 1;             // numjobs: clone c logs to x + c, from PhaseResult.threads
    bool per_job = true;        // per_job_logs=0: NAME_bw.log, shared by the clones
    bool unix_epoch = false;    // log_unix_epoch / log_alternate_epoch: Unix time in ms
  };
  std::vector<FioLog> fio_logs;

  // "stream write 1 GiB, bs 1 MiB, fdatasync".
  std::string Describe() const;
};

// How the hosts take part in each phase.
enum class RunMode {
  // All hosts at one instant: the comparison under shared load, and the aggregate.
  kConcurrent,
  // One host after another, so hosts sharing an array or a network don't disturb each
  // other's figures.
  kSequential,
};

// "keep"/"sync"/"drop"; INVALID_ARGUMENT otherwise.
common::StatusOr<stormark::v1::CacheMode> ParseCacheMode(std::string_view text);

// "concurrent"/"sequential"; INVALID_ARGUMENT otherwise.
common::StatusOr<RunMode> ParseRunMode(std::string_view text);

// One agent the plan drives.
struct HostPlan {
  // The row label in tables; the address when the plan gives no name.
  std::string name;
  // HOST:PORT or unix:/path.
  std::string address;
  // Free-form facts shown with the host's results: {transport: aoe, rack: b2}.
  std::vector<std::pair<std::string, std::string>> labels;
  // The agent target phases use on this host unless a phase names its own.
  std::string target;
  // Under TLS, the name the agent's certificate must hold; empty means the address's host.
  std::string tls_name;
};

struct Plan {
  std::vector<HostPlan> hosts;
  // Where more hosts come from: every address of a DNS name ("NAME:PORT"), and the hosts of
  // an Ansible inventory file (relative to the plan). See controller/fleet/discovery.h.
  std::string agents_dns;
  std::string inventory;
  // The controller's mutual-TLS files (relative to the plan); empty means plain text.
  common::TlsFiles tls;
  RunMode mode = RunMode::kConcurrent;
  // Every phase runs `repeat` times at each sweep point, for medians and spreads.
  int repeat = 1;
  // The sweep: every combination of the axes' values (the last axis changes fastest). A
  // value goes to a workload parameter of that name, a tuning knob, or {name} in the hooks.
  // Its points and the phases at each: plan_sweep.h.
  std::vector<SweepAxis> sweep;
  // Shell lines run on every agent before and after each sweep point (or once, without a
  // sweep), with {name} replaced by the point's values. Agents need commands enabled.
  std::vector<std::string> setup;
  std::vector<std::string> teardown;
  std::vector<PhasePlan> phases;
  // `heartbeat: {interval: 2s, timeout: 10s}`; 0 means the default (heartbeat_monitor.h).
  int64_t heartbeat_interval_nanos = 0;
  int64_t heartbeat_timeout_nanos = 0;
  // Remarks about input that was accepted but not acted on (a PostMark script's `show`), for
  // the user to read before the run: "pm.cfg:7: 'show' ignored: ...".
  std::vector<std::string> notes;
};

// The phase keys every workload has: the memory cgroup's limit ("512M", or "none") and what
// to do where an agent cannot apply it ("fail", the default, or "run_unlimited").
// `start_spread_limit: 1%`, plan-wide or per phase: "1%", "0.5%", "25%", a share above 0 and
// at most 100%. INVALID_ARGUMENT otherwise: "bad start_spread_limit '2': give a share of the
// phase, such as 1%".
inline constexpr std::string_view kStartSpreadLimitKey = "start_spread_limit";
common::StatusOr<double> ParseStartSpreadLimit(std::string_view text);

inline constexpr std::string_view kMemoryLimitKey = "memory_limit";
inline constexpr std::string_view kMemoryLimitFallbackKey = "memory_limit_if_unavailable";
// The agent's own floor (agent/host/memory_cgroup.h): it runs under the limit too.
inline constexpr uint64_t kMinMemoryLimitBytes = uint64_t{32} << 20;

// Sets `key` on `spec`: memory_limit, memory_limit_if_unavailable, a tuning knob, or an option
// (name or alias) of the phase's workload's option table. Plan keys, `--set` and sweep axes all
// come here. NOT_FOUND when neither takes the key (the caller decides whether that is an error).
common::Status SetPhaseParameter(std::string_view key, std::string_view value,
                                 stormark::v1::PhaseSpec* spec);

// The plan `stormark run` uses when given none: write 1 GiB with fdatasync, then read it
// back from outside the page cache, in 1 MiB blocks.
Plan DefaultPlan();

// Parses and validates a plan. Errors read "plan.yaml:7: phase 'w': bad size '10X': ...".
common::StatusOr<Plan> ParsePlan(std::string_view yaml, std::string_view source);
common::StatusOr<Plan> LoadPlan(const std::string& path);

// The phases a workload's own configuration file makes of `phase` (`config: FILE` in a plan,
// --postmark-config): one per run the file asks for, named like `phase` when there is one run
// and "<name>-1", "<name>-2", ... when there are several. `path` is taken as given (the caller
// resolves it); notes on lines the file's parser did not act on go to `notes`.
common::StatusOr<std::vector<PhasePlan>> PhasesFromConfig(const PhasePlan& phase,
                                                          const std::string& path,
                                                          std::vector<std::string>* notes);

// Checks a whole phase: workload-specific rules (size a multiple of bs, ...) and the name.
common::Status ValidatePhase(const PhasePlan& phase);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_PLAN_PLAN_H_
