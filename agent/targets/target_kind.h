// The target kinds as a registry: everything the agent does differently for a dir, block, null,
// aoe, nbd or iscsi target sits in that kind's module, agent/targets/<kind>/, and is reached
// through its TargetKind, as fio reaches an engine through its ioengine_ops. Code outside those
// modules asks the registry (FindTargetKind, OpenTargetDevice, CheckTargetOwner) or a
// capability (CapsOf, target_caps.h); it never tests a kind's name.
//
// Adding a kind: a folder agent/targets/<kind>/ whose <kind>_kind.cc defines one
// `const TargetKind& <Kind>TargetKind()`, one line in target_kinds.cc, and its sources in
// agent/CMakeLists.txt.
//
// The registry is constant: each entry is a function-local static made on first use, and the
// list never changes. Safe for concurrent use.
#ifndef STORMARK_AGENT_TARGETS_TARGET_KIND_H_
#define STORMARK_AGENT_TARGETS_TARGET_KIND_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/config/config.h"
#include "agent/devices/device.h"
#include "agent/devices/file_device.h"
#include "agent/host/system_paths.h"
#include "agent/targets/target_caps.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"
#include "yaml-cpp/yaml.h"

namespace stormark::agent {

class BlockTarget;  // agent/targets/block/block_target.h: a target as one phase resolved it.

// How a phase opens a target's device.
struct BlockOpenOptions {
  // The phase writes (its workload, or its layout of verifiable data).
  bool write = false;
  // O_DIRECT and the engine apply to a device on a descriptor of this host (TargetCaps::engines);
  // the other kinds ignore them.
  bool direct = false;
  Engine engine = Engine::kPsync;
};

// One target's map in the agent's config, as its kind's parser sees it.
struct TargetYaml {
  // What errors call the config ("agent.yaml", or its path).
  std::string_view source;
  // The target's map, and the value of its kind's key ("/srv/bench" in "dir: /srv/bench"),
  // which is a scalar.
  YAML::Node body;
  YAML::Node value;

  // INVALID_ARGUMENT "SOURCE:LINE: target 'NAME': WHAT", at `node`'s line.
  common::Status Error(const YAML::Node& node, const TargetConfig& target,
                       std::string_view what) const;
};

// The keys that config.cc reads itself, into TargetConfig's fields, for every kind that lists
// them in TargetKind::keys: size, disposable, io_timeout, connect_timeout, strict_modes, device. A
// kind's other keys (nbd's tls, iscsi's chap) are its own parser's.
const std::vector<std::string_view>& SharedTargetKeys();

struct TargetKind {
  // The config key that makes a target of this kind ("dir: /srv/bench"), which is also
  // TargetConfig::kind and TargetInfo::kind.
  std::string_view name;
  // How that key's value is written, for messages: "PATH" ("dir: PATH").
  std::string_view value;
  // The other keys a target of this kind takes: shared ones (SharedTargetKeys) and its own.
  // Any other key is refused, naming the kinds that take it.
  std::vector<std::string_view> keys;
  // What the kind offers workloads and the policy (target_caps.h).
  TargetCaps caps;
  // How the kind's own remote end is reached, as TargetInfo::transport labels it ("AoE",
  // "NBD", "iSCSI"); empty for a kind on this host's storage, whose transport is its device's.
  std::string_view transport;

  // Reads the kind's value and its own keys into `target` (the shared keys are read already)
  // and checks what can be checked before any phase: a directory exists, a URI parses, an AoE
  // address is well formed. Errors name the file, the line and the target (TargetYaml::Error).
  common::Status (*parse)(const TargetYaml& yaml, TargetConfig* target) = nullptr;

  // Opens the device of a target of this kind for one phase (`target` as the phase resolved
  // it), through this kind's write interlocks when options.write (agent/devices/write_guard.h:
  // disposable, nothing mounted or stacked, no signature). Remarks go to `warnings`. Waits end
  // soon after `cancelled` is set, which must outlive the device. nullptr for a kind without a
  // device (caps.device is false).
  common::StatusOr<std::unique_ptr<Device>> (*open_device)(
      BlockTarget& target, const BlockOpenOptions& options, const std::atomic<bool>& cancelled,
      std::vector<std::string>* warnings) = nullptr;

  // Fills the kind's facts into `info`, whose name, kind and path are set: size, block size,
  // disposable, transport, and for a path on this host its filesystem and device
  // (ReadFilesystemFacts in agent/host/sysinfo.h). `resolved` is what a phase resolved the target
  // to (BlockTarget::fd()), or -1. Never fails: what cannot be read is left empty.
  void (*read_facts)(const TargetConfig& target, const SystemPaths& paths, int resolved,
                     stormark::v1::TargetInfo* info) = nullptr;

  // Checks the owner and mode of what the target's path leads through, as OpenSSH's
  // StrictModes does (agent/config/strict_modes.h), for an agent running as `agent_uid`. nullptr
  // for a kind with no path on this host (caps.local_path is false).
  common::Status (*check_ownership)(const TargetConfig& target, uid_t agent_uid) = nullptr;
};

// Every kind this agent knows, in the order messages list them. Defined in target_kinds.cc,
// the one list of the modules.
const std::vector<const TargetKind*>& TargetKinds();

// The kind called `name`, or nullptr.
const TargetKind* FindTargetKind(std::string_view name);

// "dir, block, aoe, null, nbd, iscsi".
std::string TargetKindNames();

// The names of the kinds that take `key`, as a message lists them: "aoe, nbd and iscsi".
std::string KindsTaking(std::string_view key);

// For a kind whose value is a path of this host (dir, block): sets target->path to the value,
// which must be absolute.
common::Status ParseLocalPath(const TargetYaml& yaml, TargetConfig* target);

// The device of `target` for one phase: its kind's open_device. INVALID_ARGUMENT naming the
// target when its kind has no device (a dir target) or is unknown.
common::StatusOr<std::unique_ptr<Device>> OpenTargetDevice(BlockTarget& target,
                                                           const BlockOpenOptions& options,
                                                           const std::atomic<bool>& cancelled,
                                                           std::vector<std::string>* warnings);

// The kind's ownership check of `target` (TargetKind::check_ownership); OK for a kind that has
// none.
common::Status CheckTargetOwner(const TargetConfig& target, uid_t agent_uid);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_TARGET_KIND_H_
