#include "agent/devices/write_guard.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/fs.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <fstream>
#include <sstream>

#include "agent/devices/signatures.h"
#include "agent/sysinfo.h"
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
void Collect(dev_t dev, const std::string& name, std::vector<Related>* out,
             std::vector<std::string>* holders, int depth) {
  for (const Related& r : *out) {
    if (r.dev == dev) return;
  }
  out->push_back({dev, name});
  if (depth > 8) return;
  const std::string sys = common::StrCat("/sys/dev/block/", major(dev), ":", minor(dev));
  for (const std::string& entry : ListDir(sys)) {
    const std::string part = common::StrCat(sys, "/", entry);
    struct stat st;
    if (stat((part + "/partition").c_str(), &st) == 0) {
      Collect(ParseDev(ReadText(part + "/dev")), "/dev/" + entry, out, holders, depth + 1);
    }
  }
  for (const std::string& holder : ListDir(sys + "/holders")) {
    holders->push_back(common::StrCat(name, " is held by ", holder,
                                      " (RAID, device mapper or LVM is stacked on it)"));
    Collect(ParseDev(ReadText(common::StrCat(sys, "/holders/", holder, "/dev"))),
            "/dev/" + holder, out, holders, depth + 1);
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
      "; refusing to write. If it really is disposable, erase the signatures first (", erase,
      ")"));
}

}  // namespace

std::vector<std::string> FindDeviceUsers(const std::string& path, const std::string& mountinfo,
                                         const std::string& swaps) {
  std::vector<std::string> users;
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return users;
  std::vector<Related> related;
  Collect(st.st_rdev, path, &related, &users, 0);
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

common::Status CheckWritable(const TargetConfig& target) {
  const std::string what = common::StrCat("target '", target.name, "' (", target.path, ")");
  if (!target.disposable) {
    return absl::PermissionDeniedError(common::StrCat(
        what, " is not marked 'disposable: true' in the agent's config, so workloads may only "
              "read it; refusing to write"));
  }
  struct stat st;
  if (stat(target.path.c_str(), &st) != 0 || !S_ISBLK(st.st_mode)) return absl::OkStatus();

  const std::vector<std::string> users =
      FindDeviceUsers(target.path, ReadText("/proc/self/mountinfo"), ReadText("/proc/swaps"));
  if (!users.empty()) {
    std::string reasons;
    for (const auto& u : users) reasons += (reasons.empty() ? "" : "; ") + u;
    return absl::FailedPreconditionError(
        common::StrCat(what, " is in use: ", reasons, "; refusing to write"));
  }

  const int fd = open(target.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return common::ErrnoError(common::StrCat(what, ": cannot open"), errno);
  uint64_t size = 0;
  ioctl(fd, BLKGETSIZE64, &size);
  const std::vector<std::string> signatures = FindSignatures(
      [fd](uint64_t offset, size_t n, char* buf) {
        return pread(fd, buf, n, static_cast<off_t>(offset)) == static_cast<ssize_t>(n);
      },
      size);
  close(fd);
  return RefuseSignatures(what, signatures, common::StrCat("wipefs -a ", target.path));
}

common::Status CheckRemoteHoldsNoData(const TargetConfig& target, Device& device) {
  // Signatures sit at byte offsets that a network device may not address directly: read the
  // whole blocks around each and copy the part asked for.
  const uint64_t align =
      std::max<uint64_t>({1, device.block_size(), device.caps().alignment});
  std::unique_ptr<char, decltype(&std::free)> blocks(nullptr, &std::free);
  size_t capacity = 0;
  common::Status error;  // The first read that failed: then nothing can be said.
  const ReadFn read = [&](uint64_t offset, size_t n, char* buf) {
    const uint64_t start = offset / align * align;
    const uint64_t end = (offset + n + align - 1) / align * align;
    if (end > device.size() || end < start) return false;
    if (end - start > capacity) {
      capacity = end - start;
      blocks.reset(static_cast<char*>(std::aligned_alloc(align, capacity)));
      if (blocks == nullptr) {
        error = absl::ResourceExhaustedError("cannot allocate a read buffer");
        return false;
      }
    }
    const common::Status read = device.ReadAt(start, end - start, blocks.get());
    if (!read.ok()) {
      if (error.ok()) error = read;
      return false;
    }
    std::memcpy(buf, blocks.get() + (offset - start), n);
    return true;
  };
  const std::string what = common::StrCat("target '", target.name, "' (", target.path, ")");
  const std::vector<std::string> found = FindSignatures(read, device.size());
  if (!error.ok()) {
    return common::Annotate(
        error, common::StrCat(what, ": cannot check it for filesystems before writing"));
  }
  return RefuseSignatures(
      what, found,
      "wipefs -a on the server's backing file, or zero the device's first and last MiB");
}

}  // namespace stormark::agent
