#include "agent/targets/block/block_target.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>

#include "agent/devices/fill.h"
#include "agent/devices/unallocated.h"
#include "agent/devices/write_guard.h"
#include "agent/targets/block/block_kind.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::agent {
namespace {

std::string TargetName(const TargetConfig& target) {
  return common::StrCat("target '", target.name, "'");
}

// What `st` is, for a message: DeviceIdentity's words, or what else the path now leads to.
std::string Describe(const struct stat& st) {
  if (S_ISBLK(st.st_mode) || S_ISREG(st.st_mode)) return DeviceIdentity::Of(st).ToString();
  const char* type = S_ISCHR(st.st_mode)    ? "character device"
                     : S_ISDIR(st.st_mode)  ? "directory"
                     : S_ISFIFO(st.st_mode) ? "FIFO"
                     : S_ISSOCK(st.st_mode) ? "socket"
                                            : "special file";
  return common::StrCat("a ", type, " (", major(st.st_rdev), ":", minor(st.st_rdev), ")");
}

// Opened with O_NONBLOCK, so that a FIFO put in the target's place cannot hang the open; for
// what the descriptor is then checked to be (a file, a block device), it is cleared again.
common::Status ClearNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return common::ErrnoError("fcntl", errno);
  }
  return absl::OkStatus();
}

// Creates the missing file of a block target and fills it, through the descriptor that
// created it. The file is removed again if that fails, so that a half-filled file is never
// taken for a laid-out one.
common::Status CreateBlockFile(BlockTarget& block, const std::atomic<bool>& cancelled,
                               std::vector<std::string>* warnings) {
  const TargetConfig& target = block.config();
  ASSIGN_OR_RETURN(const int fd, block.CreateFile());
  common::Status status;
  const int err = posix_fallocate(fd, 0, static_cast<off_t>(target.size));
  if (err != 0 && err != EOPNOTSUPP && err != EINVAL) {
    status =
        common::ErrnoError(common::StrCat(TargetName(target), ": cannot allocate ",
                                          common::FormatBytes(target.size), " for ", target.path),
                           err);
  }
  if (status.ok() && err != 0 && ftruncate(fd, static_cast<off_t>(target.size)) != 0) {
    status = common::ErrnoError(common::StrCat(TargetName(target), ": truncate"), errno);
  }
  // A file this phase has just made holds nobody's data, disposable or not; the interlocks
  // run on its descriptor all the same (and pass a regular file).
  if (status.ok()) status = CheckDescriptorWritable(target, fd);
  if (status.ok()) {
    FileDeviceOptions options;
    options.writable = true;
    auto device = FileDevice::Adopt(fd, target.path, options);  // Closes fd on an error.
    status = device.ok() ? FillRandom(**device, 0, target.size, target.size, cancelled)
                         : device.status();
  } else {
    close(fd);
  }
  if (!status.ok()) {
    block.RemoveCreatedFile();
    return status;
  }
  warnings->push_back(common::StrCat("created ", target.path, " and filled it with ",
                                     common::FormatBytes(target.size),
                                     " of random data before the phase"));
  return absl::OkStatus();
}

}  // namespace

DeviceIdentity DeviceIdentity::Of(const struct stat& st) {
  DeviceIdentity identity;
  identity.block = S_ISBLK(st.st_mode);
  if (identity.block) {
    identity.rdev = st.st_rdev;
  } else {
    identity.dev = st.st_dev;
    identity.ino = st.st_ino;
  }
  return identity;
}

std::string DeviceIdentity::ToString() const {
  if (block) return common::StrCat("block device ", major(rdev), ":", minor(rdev));
  return common::StrCat("file ", major(dev), ":", minor(dev), " inode ", ino);
}

common::StatusOr<std::shared_ptr<BlockTarget>> BlockTarget::Resolve(const TargetConfig& target) {
  std::shared_ptr<BlockTarget> resolved(new BlockTarget(target));
  if (target.kind != BlockTargetKind().name) return resolved;
  resolved->has_path_ = true;
  const int fd = open(target.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT && target.size != 0) return resolved;  // Created when opened.
    return common::ErrnoError(common::StrCat(TargetName(target), ": ", target.path), errno);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return common::ErrnoError(common::StrCat(TargetName(target), ": stat ", target.path), err);
  }
  if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        common::StrCat(TargetName(target), ": ", target.path, " is ", Describe(st),
                       ", neither a regular file nor a block device"));
  }
  if (common::Status s = ClearNonBlocking(fd); !s.ok()) {
    close(fd);
    return common::Annotate(s, TargetName(target));
  }
  resolved->fd_ = fd;
  resolved->identity_ = DeviceIdentity::Of(st);
  resolved->exists_ = true;
  return resolved;
}

void BlockTarget::ReleaseDescriptor() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

BlockTarget::~BlockTarget() {
  if (fd_ >= 0) close(fd_);
}

common::StatusOr<int> BlockTarget::Reopen(int flags) const {
  const std::string name = TargetName(config_);
  if (!exists_) {
    return absl::FailedPreconditionError(
        common::StrCat(name, ": ", config_.path, " was not resolved for this phase"));
  }
  const int fd = open(config_.path.c_str(), flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == EBUSY && (flags & O_EXCL)) {
      return absl::FailedPreconditionError(common::StrCat(
          name, " (", config_.path,
          ") is in use (mounted, or held open exclusively by another program); refusing to "
          "write"));
    }
    if (err == EINVAL && (flags & O_DIRECT)) {
      return absl::InvalidArgumentError(common::StrCat(
          name, ": ", config_.path, ": the filesystem does not support O_DIRECT (direct: true)"));
    }
    return common::ErrnoError(common::StrCat(name, ": cannot open ", config_.path), err);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return common::ErrnoError(common::StrCat(name, ": stat ", config_.path), err);
  }
  const bool same =
      (S_ISBLK(st.st_mode) || S_ISREG(st.st_mode)) && DeviceIdentity::Of(st) == identity_;
  if (!same) {
    close(fd);
    return absl::FailedPreconditionError(common::StrCat(
        name, ": ", config_.path, " leads to ", Describe(st), " now, not to ", identity_.ToString(),
        " as when this phase resolved it; refusing to use it"));
  }
  if (common::Status s = ClearNonBlocking(fd); !s.ok()) {
    close(fd);
    return common::Annotate(s, name);
  }
  return fd;
}

common::StatusOr<int> BlockTarget::CreateFile() {
  const std::string name = TargetName(config_);
  if (exists_) {
    return absl::FailedPreconditionError(
        common::StrCat(name, ": ", config_.path, " exists already"));
  }
  const int fd =
      open(config_.path.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    return common::ErrnoError(common::StrCat(name, ": cannot create ", config_.path), errno);
  }
  struct stat st;
  const int anchor = fstat(fd, &st) == 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (anchor < 0) {
    const int err = errno;
    close(fd);
    unlink(config_.path.c_str());  // Just made by this call, and not yet known by identity.
    return common::ErrnoError(common::StrCat(name, ": ", config_.path), err);
  }
  fd_ = anchor;
  identity_ = DeviceIdentity::Of(st);
  exists_ = true;
  created_ = true;
  return fd;
}

void BlockTarget::RemoveCreatedFile() {
  if (!created_) return;
  struct stat st;
  if (lstat(config_.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
      DeviceIdentity::Of(st) == identity_) {
    unlink(config_.path.c_str());
  }
  ReleaseDescriptor();
  identity_ = DeviceIdentity();
  exists_ = false;
  created_ = false;
}

common::StatusOr<std::unique_ptr<Device>> OpenBlockTarget(BlockTarget& block,
                                                          const BlockOpenOptions& options,
                                                          const std::atomic<bool>& cancelled,
                                                          std::vector<std::string>* warnings) {
  const TargetConfig& target = block.config();
  if (!block.has_path()) {
    return absl::InvalidArgumentError(
        common::StrCat("target '", target.name, "' is a ", target.kind, " target, not block"));
  }
  if (!block.exists()) RETURN_IF_ERROR(CreateBlockFile(block, cancelled, warnings));
  if (options.write) {
    RETURN_IF_ERROR(CheckDisposable(target));
    // First on what the phase resolved, so that a device in use is refused naming what uses
    // it (the exclusive open below could only say "busy").
    if (block.fd() >= 0) RETURN_IF_ERROR(CheckDescriptorWritable(target, block.fd()));
  }
  int flags = (options.write ? O_RDWR : O_RDONLY) | (options.direct ? O_DIRECT : 0);
  if (options.write && block.identity().block) flags |= O_EXCL;  // Interlock 4.
  ASSIGN_OR_RETURN(const int fd, block.Reopen(flags));
  if (options.write) {
    // Again on the descriptor written through, now that it holds the device exclusively:
    // nothing can mount it or stack on it any more.
    if (common::Status s = CheckDescriptorWritable(target, fd); !s.ok()) {
      close(fd);
      return s;
    }
  }
  FileDeviceOptions device_options;
  device_options.writable = options.write;
  device_options.direct = options.direct;
  device_options.engine = options.engine;
  device_options.size = target.size;
  auto device = FileDevice::Adopt(fd, target.path, device_options);
  if (!device.ok()) return common::Annotate(device.status(), TargetName(target));
  return std::unique_ptr<Device>(std::move(*device));
}

std::optional<Unallocated> FindUnallocated(const BlockTarget& block, uint64_t begin, uint64_t end,
                                           const std::string& sys_dev_block) {
  const TargetConfig& target = block.config();
  if (!block.has_path() || block.fd() < 0 || begin >= end) return std::nullopt;
  // Where the device's bytes live: the file itself, or a loop device's backing file (found
  // by the device's number).
  Unallocated found;
  found.where = target.path;
  int fd = block.fd();
  uint64_t shift = 0;
  int backing_fd = -1;
  if (block.identity().block) {
    std::optional<LoopBacking> backing = LoopBackingOf(block.identity().rdev, sys_dev_block);
    if (!backing) return std::nullopt;
    backing_fd = open(backing->file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    // A backing file this agent may not read: it cannot tell.
    if (backing_fd < 0) return std::nullopt;
    // The file at that path must be the one the device reads (it may have been replaced).
    struct loop_info64 info {};
    struct stat st;
    if (ioctl(block.fd(), LOOP_GET_STATUS64, &info) != 0 || fstat(backing_fd, &st) != 0 ||
        info.lo_device != static_cast<uint64_t>(st.st_dev) ||
        info.lo_inode != static_cast<uint64_t>(st.st_ino)) {
      close(backing_fd);
      return std::nullopt;
    }
    fd = backing_fd;
    shift = info.lo_offset;
    found.where = common::StrCat(target.path, " (on ", backing->file, ")");
  }
  struct stat file_st;
  const bool stated = fstat(fd, &file_st) == 0 && S_ISREG(file_st.st_mode);
  auto holes = stated ? UnallocatedRanges(fd, begin + shift, end + shift)
                      : common::StatusOr<std::vector<ByteRange>>(absl::InternalError(""));
  if (backing_fd >= 0) close(backing_fd);
  if (!holes.ok()) return std::nullopt;
  for (const ByteRange& hole : *holes) found.bytes += hole.end - hole.begin;
  // A filesystem without SEEK_HOLE (NFSv3, FUSE) calls everything data; so does one that
  // compresses. Fewer bytes allocated than the data claimed means the answer cannot be trusted.
  const uint64_t allocated = static_cast<uint64_t>(file_st.st_blocks) * 512;
  if (allocated < (end - begin) - found.bytes) return std::nullopt;
  return found;
}

bool WarnUnallocated(const BlockTarget& block, uint64_t begin, uint64_t end,
                     const std::string& sys_dev_block, std::vector<std::string>* warnings) {
  const TargetConfig& target = block.config();
  const std::optional<Unallocated> found = FindUnallocated(block, begin, end, sys_dev_block);
  if (!found) return false;
  if (found->bytes == 0) return true;
  warnings->push_back(common::StrCat(
      "target '", target.name, "': ", common::FormatBytes(found->bytes), " of the ",
      common::FormatBytes(end - begin), " this phase reads hold no data in ", found->where,
      " (a sparse or preallocated file); reads there return zeros without touching the disk, "
      "so the figures are too good: write it first (e.g. a stream write phase of that size)"));
  return true;
}

}  // namespace stormark::agent
