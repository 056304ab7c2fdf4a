#include "agent/devices/write_guard.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/fs.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "agent/devices/signatures.h"
#include "agent/host/sysinfo.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "8:17" -> dev_t, or 0.
dev_t ParseDev(std::string_view text) {
  text = common::Trim(text);
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return 0;
  try {
    return makedev(std::stoul(std::string(text.substr(0, colon))),
                   std::stoul(std::string(text.substr(colon + 1))));
  } catch (const std::exception&) {
    return 0;
  }
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  return names;
}

struct Related {
  dev_t dev;
  std::string name;  // "/dev/sdb1"
};

// The device, its partitions, and everything stacked on any of them, with their holders' names.
void Collect(dev_t dev, const std::string& name, const std::string& sys_dev_block,
             std::vector<Related>* out, std::vector<std::string>* holders, int depth) {
  for (const Related& r : *out) {
    if (r.dev == dev) return;
  }
  out->push_back({dev, name});
  if (depth > 8) return;
  const std::string sys = common::StrCat(sys_dev_block, "/", major(dev), ":", minor(dev));
  for (const std::string& entry : ListDir(sys)) {
    const std::string part = common::StrCat(sys, "/", entry);
    struct stat st;
    if (stat((part + "/partition").c_str(), &st) == 0) {
      Collect(ParseDev(ReadText(part + "/dev")), "/dev/" + entry, sys_dev_block, out, holders,
              depth + 1);
    }
  }
  for (const std::string& holder : ListDir(sys + "/holders")) {
    holders->push_back(common::StrCat(name, " is held by ", holder,
                                      " (RAID, device mapper or LVM is stacked on it)"));
    Collect(ParseDev(ReadText(common::StrCat(sys, "/holders/", holder, "/dev"))), "/dev/" + holder,
            sys_dev_block, out, holders, depth + 1);
  }
}

// FAILED_PRECONDITION naming what `what` holds, with how to erase it; OK when nothing.
common::Status RefuseSignatures(const std::string& what, const std::vector<std::string>& found,
                                const std::string& erase) {
  if (found.empty()) return absl::OkStatus();
  std::string names;
  for (const auto& s : found) names += (names.empty() ? "" : ", ") + s;
  return absl::FailedPreconditionError(common::StrCat(
      what, " holds data: ", names,
      "; refusing to write. If it really is disposable, erase the signatures first (", erase, ")"));
}

std::string What(const TargetConfig& target) {
  return common::StrCat("target '", target.name, "' (", target.path, ")");
}

// Reads what FindSignatures asks for, at any byte offset, from a device that reads only whole
// aligned blocks: the blocks around the bytes asked for are read, and the part asked copied.
class AlignedReader {
 public:
  // Reads [offset, offset + n) (multiples of the alignment) into `buf` (aligned).
  using BlockRead = std::function<common::Status(uint64_t offset, size_t n, char* buf)>;

  AlignedReader(uint64_t alignment, uint64_t size, BlockRead read)
      : alignment_(std::max<uint64_t>(1, alignment)), size_(size), read_(std::move(read)) {}

  bool Read(uint64_t offset, size_t n, char* buf) {
    const uint64_t start = offset / alignment_ * alignment_;
    const uint64_t end = (offset + n + alignment_ - 1) / alignment_ * alignment_;
    if (end > size_ || end < start) return false;
    if (end - start > capacity_) {
      // Aligned for O_DIRECT whatever the device's own alignment, in a size aligned_alloc takes.
      const uint64_t buffer_alignment = std::max<uint64_t>(alignment_, 4096);
      capacity_ = (end - start + buffer_alignment - 1) / buffer_alignment * buffer_alignment;
      blocks_.reset(static_cast<char*>(std::aligned_alloc(buffer_alignment, capacity_)));
      if (blocks_ == nullptr) {
        capacity_ = 0;
        if (error_.ok()) error_ = absl::ResourceExhaustedError("cannot allocate a read buffer");
        return false;
      }
    }
    const common::Status read = read_(start, end - start, blocks_.get());
    if (!read.ok()) {
      if (error_.ok()) error_ = read;
      return false;
    }
    std::memcpy(buf, blocks_.get() + (offset - start), n);
    return true;
  }

  // The first read that failed: then nothing can be said of what the device holds.
  const common::Status& error() const { return error_; }

 private:
  const uint64_t alignment_;
  const uint64_t size_;
  const BlockRead read_;
  std::unique_ptr<char, decltype(&std::free)> blocks_{nullptr, &std::free};
  size_t capacity_ = 0;
  common::Status error_;
};

}  // namespace

std::vector<std::string> FindDeviceUsers(dev_t dev, const std::string& name,
                                         const std::string& mountinfo, const std::string& swaps,
                                         const std::string& sys_dev_block) {
  std::vector<std::string> users;
  std::vector<Related> related;
  Collect(dev, name, sys_dev_block, &related, &users, 0);
  auto find = [&related](dev_t dev) -> const Related* {
    for (const Related& r : related) {
      if (r.dev == dev) return &r;
    }
    return nullptr;
  };

  std::istringstream mounts(mountinfo);
  std::string line;
  while (std::getline(mounts, line)) {
    // id parent major:minor root mount-point options ... - fstype source super-options
    const std::vector<std::string_view> fields = common::Split(line, ' ');
    if (fields.size() < 5) continue;
    if (const Related* r = find(ParseDev(fields[2]))) {
      users.push_back(common::StrCat(r->name, " is mounted at ", UnescapeMountField(fields[4])));
    }
  }
  std::istringstream swap_lines(swaps);
  while (std::getline(swap_lines, line)) {
    std::string file;
    std::istringstream(line) >> file;
    file = UnescapeMountField(file);
    struct stat sw;
    if (stat(file.c_str(), &sw) == 0 && S_ISBLK(sw.st_mode)) {
      if (const Related* r = find(sw.st_rdev)) users.push_back(r->name + " is in use as swap");
    }
  }
  return users;
}

common::StatusOr<std::vector<std::string>> FindSignaturesThrough(int fd, uint64_t size,
                                                                 uint32_t alignment) {
  AlignedReader reader(alignment, size, [fd](uint64_t offset, size_t n, char* buf) {
    size_t done = 0;
    while (done < n) {
      const ssize_t r = pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return common::ErrnoError(common::StrCat("read at ", offset + done), errno);
      if (r == 0) {
        return absl::DataLossError(common::StrCat("read at ", offset + done, ": end of device"));
      }
      done += static_cast<size_t>(r);
    }
    return absl::OkStatus();
  });
  std::vector<std::string> found = FindSignatures(
      [&reader](uint64_t offset, size_t n, char* buf) { return reader.Read(offset, n, buf); },
      size);
  if (!reader.error().ok()) return reader.error();
  return found;
}

common::Status CheckDisposable(const TargetConfig& target) {
  if (target.disposable) return absl::OkStatus();
  return absl::PermissionDeniedError(common::StrCat(
      What(target),
      " is not marked 'disposable: true' in the agent's config, so workloads may only read it; "
      "refusing to write"));
}

common::Status CheckDescriptorWritable(const TargetConfig& target, int fd,
                                       const std::string& sys_dev_block) {
  const std::string what = What(target);
  struct stat st;
  if (fstat(fd, &st) != 0) return common::ErrnoError(common::StrCat(what, ": stat"), errno);
  if (!S_ISBLK(st.st_mode)) return absl::OkStatus();

  const std::vector<std::string> users =
      FindDeviceUsers(st.st_rdev, target.path, ReadText("/proc/self/mountinfo"),
                      ReadText("/proc/swaps"), sys_dev_block);
  if (!users.empty()) {
    std::string reasons;
    for (const auto& u : users) reasons += (reasons.empty() ? "" : "; ") + u;
    return absl::FailedPreconditionError(
        common::StrCat(what, " is in use: ", reasons, "; refusing to write"));
  }

  uint64_t size = 0;
  if (ioctl(fd, BLKGETSIZE64, &size) != 0) {
    return common::ErrnoError(common::StrCat(what, ": size"), errno);
  }
  int logical = 0;
  if (ioctl(fd, BLKSSZGET, &logical) != 0 || logical <= 0) logical = 512;
  auto signatures = FindSignaturesThrough(fd, size, static_cast<uint32_t>(logical));
  if (!signatures.ok()) {
    return common::Annotate(
        signatures.status(),
        common::StrCat(what, ": cannot check it for filesystems before writing"));
  }
  return RefuseSignatures(what, *signatures, common::StrCat("wipefs -a ", target.path));
}

common::Status CheckRemoteHoldsNoData(const TargetConfig& target, Device& device) {
  // Signatures sit at byte offsets that a network device may not address directly.
  const uint64_t align = std::max<uint64_t>({1, device.block_size(), device.caps().alignment});
  AlignedReader reader(align, device.size(), [&device](uint64_t offset, size_t n, char* buf) {
    return device.ReadAt(offset, n, buf);
  });
  const std::vector<std::string> found = FindSignatures(
      [&reader](uint64_t offset, size_t n, char* buf) { return reader.Read(offset, n, buf); },
      device.size());
  const std::string what = What(target);
  if (!reader.error().ok()) {
    return common::Annotate(
        reader.error(), common::StrCat(what, ": cannot check it for filesystems before writing"));
  }
  return RefuseSignatures(
      what, found,
      "wipefs -a on the server's backing file, or zero the device's first and last MiB");
}

}  // namespace stormark::agent
