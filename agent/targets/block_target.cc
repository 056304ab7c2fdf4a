#include "agent/targets/block_target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "agent/devices/aoe/aoe_address.h"
#include "agent/devices/aoe/aoe_device.h"
#include "agent/devices/aoe/packet_link.h"
#include "agent/devices/fill.h"
#include "agent/devices/null_device.h"
#include "agent/devices/unallocated.h"
#include "agent/devices/write_guard.h"
#include "agent/targets/net_target.h"
#include "common/strings.h"
#include "common/units.h"

namespace stormark::agent {
namespace {

// Creates the missing file of a block target and fills it. The file is removed again if that
// fails, so that a half-filled file is never taken for a laid-out one.
common::Status CreateBlockFile(const TargetConfig& target, const std::atomic<bool>& cancelled,
                               std::vector<std::string>* warnings) {
  const int fd = open(target.path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    return common::ErrnoError(
        common::StrCat("target '", target.name, "': cannot create ", target.path), errno);
  }
  const int err = posix_fallocate(fd, 0, static_cast<off_t>(target.size));
  close(fd);
  common::Status status;
  if (err != 0 && err != EOPNOTSUPP && err != EINVAL) {
    status = common::ErrnoError(
        common::StrCat("target '", target.name, "': cannot allocate ",
                       common::FormatBytes(target.size), " for ", target.path),
        err);
  }
  if (status.ok() && err != 0 && truncate(target.path.c_str(), static_cast<off_t>(target.size))) {
    status = common::ErrnoError(common::StrCat("target '", target.name, "': truncate"), errno);
  }
  if (status.ok()) {
    FileDeviceOptions options;
    options.writable = true;
    auto device = FileDevice::Open(target.path, options);
    status = device.ok() ? FillRandom(**device, 0, target.size, target.size, cancelled)
                         : device.status();
  }
  if (!status.ok()) {
    unlink(target.path.c_str());
    return status;
  }
  warnings->push_back(common::StrCat("created ", target.path, " and filled it with ",
                                     common::FormatBytes(target.size),
                                     " of random data before the phase"));
  return absl::OkStatus();
}

// An AoE target, through stormark's own initiator. Writing needs `disposable: true`.
common::StatusOr<std::unique_ptr<Device>> OpenAoeTarget(const TargetConfig& target,
                                                        const BlockOpenOptions& options,
                                                        const std::atomic<bool>& cancelled) {
  if (options.write) RETURN_IF_ERROR(CheckWritable(target));
  const std::string context = common::StrCat("target '", target.name, "'");
  auto address = aoe::ParseAoeAddress(target.path);
  if (!address.ok()) return common::Annotate(address.status(), context);
  aoe::AoeDeviceOptions device_options;
  device_options.writable = options.write;
  device_options.size = target.size;
  device_options.timers.cancelled = &cancelled;
  if (target.io_timeout_nanos > 0) device_options.timers.request_timeout_nanos = target.io_timeout_nanos;
  if (target.connect_timeout_nanos > 0) {
    device_options.timers.discovery_timeout_nanos = target.connect_timeout_nanos;
  }
  auto device = aoe::AoeDevice::Open(*address, device_options,
                                     aoe::PacketLinkFactory(address->interface),
                                     common::SystemClock());
  if (!device.ok()) return common::Annotate(device.status(), context);
  if (options.write) RETURN_IF_ERROR(CheckRemoteHoldsNoData(target, **device));
  return std::unique_ptr<Device>(std::move(*device));
}

}  // namespace

common::StatusOr<std::unique_ptr<Device>> OpenBlockTarget(const TargetConfig& target,
                                                          const BlockOpenOptions& options,
                                                          const std::atomic<bool>& cancelled,
                                                          std::vector<std::string>* warnings) {
  if (target.kind == "null") return std::unique_ptr<Device>(new NullDevice(target.size));
  if (target.kind == "aoe") return OpenAoeTarget(target, options, cancelled);
  if (target.is_network()) return OpenNetTarget(target, options.write, cancelled);
  if (target.kind != "block") {
    return absl::InvalidArgumentError(
        common::StrCat("target '", target.name, "' is a ", target.kind, " target, not block"));
  }
  struct stat st;
  if (stat(target.path.c_str(), &st) != 0) {
    if (errno != ENOENT || target.size == 0) {
      return common::ErrnoError(common::StrCat("target '", target.name, "': ", target.path),
                                errno);
    }
    RETURN_IF_ERROR(CreateBlockFile(target, cancelled, warnings));
  }
  if (options.write) RETURN_IF_ERROR(CheckWritable(target));

  FileDeviceOptions device_options;
  device_options.writable = options.write;
  device_options.direct = options.direct;
  device_options.engine = options.engine;
  device_options.size = target.size;
  device_options.exclusive = options.write;
  auto device = FileDevice::Open(target.path, device_options);
  if (!device.ok()) {
    return common::Annotate(device.status(), common::StrCat("target '", target.name, "'"));
  }
  return std::unique_ptr<Device>(std::move(*device));
}

std::optional<Unallocated> FindUnallocated(const TargetConfig& target, uint64_t begin,
                                           uint64_t end, const std::string& sys_dev_block) {
  if (target.kind != "block" || begin >= end) return std::nullopt;
  struct stat st;
  if (stat(target.path.c_str(), &st) != 0) return std::nullopt;  // Opening it says why.
  // Where the device's bytes live: the file itself, or a loop device's backing file (found
  // by the device's number, so a symlink to it is followed).
  Unallocated found;
  found.where = target.path;
  std::string file = target.path;
  uint64_t shift = 0;
  if (S_ISBLK(st.st_mode)) {
    std::optional<LoopBacking> backing = LoopBackingOf(st.st_rdev, sys_dev_block);
    if (!backing) return std::nullopt;
    file = backing->file;
    shift = backing->offset;
    found.where = common::StrCat(target.path, " (on ", file, ")");
  } else if (!S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  const int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // A backing file this agent may not read: it cannot tell.
  struct stat file_st;
  const bool stated = fstat(fd, &file_st) == 0;
  auto holes = UnallocatedRanges(fd, begin + shift, end + shift);
  close(fd);
  if (!stated || !holes.ok()) return std::nullopt;
  for (const ByteRange& hole : *holes) found.bytes += hole.end - hole.begin;
  // A filesystem without SEEK_HOLE (NFSv3, FUSE) calls everything data; so does one that
  // compresses. Fewer bytes allocated than the data claimed means the answer cannot be trusted.
  const uint64_t allocated = static_cast<uint64_t>(file_st.st_blocks) * 512;
  if (allocated < (end - begin) - found.bytes) return std::nullopt;
  return found;
}

bool WarnUnallocated(const TargetConfig& target, uint64_t begin, uint64_t end,
                     const std::string& sys_dev_block, std::vector<std::string>* warnings) {
  const std::optional<Unallocated> found = FindUnallocated(target, begin, end, sys_dev_block);
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
