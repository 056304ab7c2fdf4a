#include "agent/targets/block/block_kind.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "agent/config/strict_modes.h"
#include "agent/host/sysinfo.h"
#include "agent/targets/block/block_target.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

common::Status Parse(const TargetYaml& yaml, TargetConfig* target) {
  RETURN_IF_ERROR(ParseLocalPath(yaml, target));
  struct stat st;
  if (stat(target->path.c_str(), &st) == 0) {
    if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
      return yaml.Error(
          yaml.value, *target,
          common::StrCat("block ", target->path, " is neither a block device nor a regular file"));
    }
    return absl::OkStatus();
  }
  // A file that does not exist yet is created (and filled) on first use: it needs a size and
  // an existing directory.
  const std::string parent = target->path.substr(0, target->path.rfind('/') + 1);
  if (stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return yaml.Error(yaml.value, *target,
                      common::StrCat("block ", target->path, " does not exist"));
  }
  if (target->size == 0) {
    return yaml.Error(yaml.value, *target,
                      common::StrCat("block file ", target->path,
                                     " does not exist; give 'size' to have the agent create it"));
  }
  return absl::OkStatus();
}

void ReadFacts(const TargetConfig& target, const SystemPaths& paths, int resolved,
               stormark::v1::TargetInfo* info) {
  info->set_disposable(target.disposable);
  struct stat st;
  const bool exists =
      resolved >= 0 ? fstat(resolved, &st) == 0 : stat(target.path.c_str(), &st) == 0;
  if (exists && S_ISBLK(st.st_mode)) {
    // A raw device: its own size and sector size; it is not on a filesystem.
    info->set_block_kind("device");
    info->set_device(target.path);
    ReadDeviceQueue(st.st_rdev, paths, info);
    const int fd = resolved >= 0 ? resolved : open(target.path.c_str(), O_RDONLY | O_CLOEXEC);
    uint64_t size = 0;
    int logical = 0;
    if (fd >= 0) {
      if (ioctl(fd, BLKGETSIZE64, &size) != 0) size = 0;
      if (ioctl(fd, BLKSSZGET, &logical) != 0) logical = 0;
      if (fd != resolved) close(fd);
    }
    info->set_size_bytes(target.size != 0 ? std::min(target.size, size) : size);
    info->set_logical_block_size(static_cast<uint32_t>(logical));
    return;
  }
  info->set_block_kind("file");
  info->set_size_bytes(target.size != 0 ? target.size : exists ? st.st_size : 0);
  info->set_logical_block_size(exists ? static_cast<uint32_t>(st.st_blksize) : 4096);
  ReadFilesystemFacts(target.path, paths, resolved, info);
}

common::Status CheckOwnership(const TargetConfig& target, uid_t agent_uid) {
  // A device node (/dev/sdb, or a /dev/disk/by-id link to one) is root:disk 0660 by design;
  // its identity is checked where it is opened. A regular file is written as a dir target's
  // files are, and one not made yet will be made in its directory ("/." lets that be a link).
  struct stat st;
  if (stat(target.path.c_str(), &st) == 0) {
    if (S_ISBLK(st.st_mode)) return absl::OkStatus();
    return CheckTrustedPath(target.path, TrustedKind::kFile, agent_uid);
  }
  const std::string parent = target.path.substr(0, target.path.rfind('/') + 1);
  return CheckTrustedPath(common::StrCat(parent, "."), TrustedKind::kDirectory, agent_uid);
}

}  // namespace

const TargetKind& BlockTargetKind() {
  static const TargetKind kind = {
      .name = "block",
      .value = "PATH",
      .keys = {"size", "disposable", "strict_modes", "device"},
      .caps = {.device = true, .local_path = true, .page_cache = true, .engines = true},
      .transport = "",
      .parse = Parse,
      .open_device = OpenBlockTarget,
      .read_facts = ReadFacts,
      .check_ownership = CheckOwnership,
  };
  return kind;
}

}  // namespace stormark::agent
