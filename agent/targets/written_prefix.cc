#include "agent/targets/written_prefix.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <optional>

#include "agent/devices/unallocated.h"
#include "agent/targets/target_caps.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

// Targets the agent may write and whose data a later phase can read.
bool Tracked(const TargetConfig& target) {
  const TargetCaps caps = CapsOf(target);
  return target.disposable && caps.device && !caps.discards;
}

}  // namespace

std::string TargetIdentity(const BlockTarget& target, const SystemPaths& paths) {
  if (!target.has_path()) return "";
  if (!target.exists()) return "missing";
  const DeviceIdentity& device = target.identity();
  if (!device.block) return common::StrCat("file ", device.dev, ":", device.ino);
  std::string identity = common::StrCat("device ", major(device.rdev), ":", minor(device.rdev));
  if (const std::optional<LoopBacking> backing = LoopBackingOf(device.rdev, paths.sys_dev_block)) {
    struct stat file;
    const bool found = stat(backing->file.c_str(), &file) == 0;
    identity += common::StrCat(" on ", backing->file, " at ", backing->offset,
                               found ? common::StrCat(" ", file.st_ino) : "");
  }
  return identity;
}

WrittenPrefix WrittenPrefixes::Find(const TargetConfig& target, const std::string& identity) {
  if (!Tracked(target)) return {};
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(target.name);
  if (it == entries_.end()) return {};
  if (it->second.identity != identity) {
    entries_.erase(it);
    return {};
  }
  return it->second.prefix;
}

void WrittenPrefixes::Record(const TargetConfig& target, const std::string& identity,
                             const WrittenPrefix& written) {
  if (!Tracked(target)) return;
  if (written.discarded) {
    absl::MutexLock lock(&mu_);
    entries_.erase(target.name);
    return;
  }
  if (written.bytes == 0) return;
  absl::MutexLock lock(&mu_);
  Entry& entry = entries_[target.name];
  if (entry.identity != identity || entry.prefix.device_size != written.device_size ||
      written.bytes >= entry.prefix.bytes) {
    entry.identity = identity;
    entry.prefix = written;
  }
}

void WrittenPrefixes::ForgetAll() {
  absl::MutexLock lock(&mu_);
  entries_.clear();
}

}  // namespace stormark::agent
