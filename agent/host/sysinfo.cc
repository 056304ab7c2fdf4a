#include "agent/host/sysinfo.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include <fstream>
#include <sstream>

#include "agent/host/environment.h"
#include "agent/host/storage_transport.h"
#include "agent/targets/target_kind.h"
#include "agent/host/tuning.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    // x86 says "model name", some ARM kernels only "Hardware" or "CPU part".
    if (line.starts_with("model name") || line.starts_with("Hardware")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        return std::string(common::Trim(line.substr(colon + 1)));
      }
    }
  }
  return "";
}

}  // namespace

std::string UnescapeMountField(std::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string octal(field.substr(i + 1, 3));
      if (octal.find_first_not_of("01234567") == std::string::npos) {
        out.push_back(static_cast<char>(std::stoi(octal, nullptr, 8)));
        i += 3;
        continue;
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

namespace {

bool IsUnder(const std::string& path, const std::string& mount_point) {
  if (mount_point == "/") return true;
  return path == mount_point || (path.starts_with(mount_point) && path[mount_point.size()] == '/');
}

std::string ReadLine(const std::string& path) { return ReadSysfsLine(path).value_or(""); }

// The limit in a memory.max or memory.limit_in_bytes file; 0 for "max", for v1's "no limit"
// (a page-rounded INT64_MAX), or when it cannot be read.
uint64_t LimitIn(const std::string& path) {
  const std::optional<std::string> text = ReadSysfsLine(path);
  if (!text || text->empty() || *text == "max") return 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text->c_str(), &end, 10);
  if (*end != '\0' || value >= (uint64_t{1} << 62)) return 0;
  return value;
}

}  // namespace

uint64_t ReadCgroupMemoryLimit(const std::string& proc_self_cgroup,
                               const std::string& sys_fs_cgroup) {
  std::ifstream in(proc_self_cgroup);
  std::string line;
  uint64_t limit = 0;
  while (std::getline(in, line)) {
    // "ID:CONTROLLERS:PATH": "0::/system.slice/x.service" (v2), "4:memory:/x" (v1).
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    std::string root, file;
    if (controllers.empty()) {
      root = sys_fs_cgroup;
      file = "memory.max";
    } else {
      bool memory = false;
      for (std::string_view c : common::Split(controllers, ',')) memory |= c == "memory";
      if (!memory) continue;
      root = sys_fs_cgroup + "/memory";
      file = "memory.limit_in_bytes";
    }
    if (path.find("/..") != std::string::npos) continue;
    // The cgroup and every one above it: the smallest limit is the one that holds.
    for (;;) {
      const uint64_t here = LimitIn(common::StrCat(root, path == "/" ? "" : path, "/", file));
      if (here != 0 && (limit == 0 || here < limit)) limit = here;
      if (path.empty() || path == "/") break;
      const size_t slash = path.rfind('/');
      path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
    }
  }
  return limit;
}

HostFacts ReadHostFacts() {
  HostFacts facts;
  utsname uts{};
  if (uname(&uts) == 0) {
    facts.hostname = uts.nodename;
    facts.kernel = common::StrCat(uts.sysname, " ", uts.release);
  }
  facts.cpu_model = CpuModel();
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  facts.cpu_count = cpus > 0 ? static_cast<uint32_t>(cpus) : 0;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    facts.ram_bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  }
  facts.memory_limit_bytes = ReadCgroupMemoryLimit("/proc/self/cgroup", "/sys/fs/cgroup");
  return facts;
}

namespace {

// Where the open file `fd` is, by the kernel's own account; "" when it cannot tell.
std::string PathOfDescriptor(int fd) {
  char buf[PATH_MAX];
  const ssize_t n = readlink(common::StrCat("/proc/self/fd/", fd).c_str(), buf, sizeof(buf) - 1);
  if (n <= 0 || buf[0] != '/') return "";
  std::string path(buf, static_cast<size_t>(n));
  if (path.ends_with(" (deleted)")) return "";
  return path;
}

}  // namespace

void ReadDeviceQueue(dev_t dev, const SystemPaths& paths, stormark::v1::TargetInfo* info) {
  if (dev == 0) return;
  char resolved[PATH_MAX];
  const std::string link = common::StrCat(paths.sys_dev_block, "/", major(dev), ":", minor(dev));
  if (realpath(link.c_str(), resolved) == nullptr) return;
  std::string sys = resolved;
  const std::string name = sys.substr(sys.rfind('/') + 1);
  struct stat st;
  if (stat((sys + "/partition").c_str(), &st) == 0) sys = sys.substr(0, sys.rfind('/'));
  if (stat((sys + "/queue").c_str(), &st) != 0) return;
  auto& queue = *info->mutable_device_queue();
  queue["name"] = sys.substr(sys.rfind('/') + 1);
  for (const char* key : {"rotational", "nr_requests", "read_ahead_kb", "max_sectors_kb",
                          "write_cache", "logical_block_size", "physical_block_size"}) {
    const std::string value = ReadLine(common::StrCat(sys, "/queue/", key));
    if (!value.empty()) queue[key] = value;
  }
  const std::string schedulers = ReadLine(sys + "/queue/scheduler");
  if (!schedulers.empty()) queue["scheduler"] = CurrentSysfsChoice(schedulers);
  for (const char* key : {"model", "vendor", "queue_depth"}) {
    const std::string value = ReadLine(common::StrCat(sys, "/device/", key));
    if (!value.empty()) queue[key] = value;
  }
  if (!info->transport().empty()) return;  // Set by a target of the agent's own initiator.
  const DeviceTransport transport = DetectTransport(name, paths);
  info->set_transport(transport.label);
  info->set_transport_detail(transport.detail);
  // A stacked device (dm, md) has no model of its own: its disks' is the one that matters.
  if (!queue.contains("model") && !transport.model.empty()) queue["model"] = transport.model;
  if (!queue.contains("vendor") && !transport.vendor.empty()) queue["vendor"] = transport.vendor;
  if (!transport.backing_file.empty()) queue["backing_file"] = transport.backing_file;
}

bool Ext4WithoutJournal(const std::string& device, const SystemPaths& paths) {
  if (!device.starts_with("/dev/") || device.size() <= 5) return false;
  // jbd2 names a journal after the kernel's name of the device: /dev/mapper/vg-lv is dm-0, and a
  // name the kernel gives with a '!' lives under a folder of /dev: etherd!e1.1 is /dev/etherd/e1.1.
  char real[PATH_MAX];
  const std::string resolved = realpath(device.c_str(), real) != nullptr ? real : device;
  std::string name = resolved.substr(5);
  std::replace(name.begin(), name.end(), '/', '!');
  DIR* dir = opendir(paths.proc_fs_jbd2.c_str());
  if (dir == nullptr) return true;  // No journal at all on this host.
  bool found = false;
  while (const dirent* e = readdir(dir)) {
    if (std::string_view(e->d_name).starts_with(name + "-")) found = true;
  }
  closedir(dir);
  return !found;
}

void ReadFilesystemFacts(const std::string& configured, const SystemPaths& paths, int resolved,
                         stormark::v1::TargetInfo* info) {
  char real[PATH_MAX];
  std::string path = resolved >= 0 ? PathOfDescriptor(resolved) : "";
  if (path.empty()) path = realpath(configured.c_str(), real) ? real : configured;

  // The mount holding the path is the last, longest mount point that is a prefix of it.
  std::ifstream in("/proc/self/mountinfo");
  std::string line, source;
  size_t best = 0;
  while (std::getline(in, line)) {
    // id parent major:minor root mount-point options [optional...] - fstype source super-options
    const std::vector<std::string_view> fields = common::Split(line, ' ');
    if (fields.size() < 10) continue;
    const std::string mount_point = UnescapeMountField(fields[4]);
    if (!IsUnder(path, mount_point) || mount_point.size() < best) continue;
    size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash + 2 >= fields.size()) continue;
    best = mount_point.size();
    info->set_filesystem(std::string(fields[dash + 1]));
    source = UnescapeMountField(fields[dash + 2]);
    info->set_device(std::string_view(source).starts_with("/dev/") ? source : "");
    info->set_mount_options(std::string(fields[5]));
  }
  if (info->transport().empty()) {
    const DeviceTransport network = FilesystemTransport(info->filesystem(), source);
    info->set_transport(network.label);
    info->set_transport_detail(network.detail);
  }

  struct stat on {};
  if ((resolved >= 0 && fstat(resolved, &on) == 0) || stat(path.c_str(), &on) == 0 ||
      stat(path.substr(0, path.rfind('/') + 1).c_str(), &on) == 0) {
    ReadDeviceQueue(on.st_dev, paths, info);
  }

  struct statvfs vfs {};
  if ((resolved >= 0 && fstatvfs(resolved, &vfs) == 0) || statvfs(path.c_str(), &vfs) == 0) {
    info->set_free_bytes(static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize);
    info->set_total_bytes(static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize);
  }
}

namespace {

// ReadTargetFacts without the environment map.
stormark::v1::TargetInfo ReadFacts(const TargetConfig& target, const SystemPaths& paths,
                                   int resolved) {
  stormark::v1::TargetInfo info;
  info.set_name(target.name);
  info.set_kind(target.kind);
  info.set_path(target.path);
  const TargetKind* kind = FindTargetKind(target.kind);
  if (kind != nullptr && kind->read_facts != nullptr)
    kind->read_facts(target, paths, resolved, &info);
  return info;
}

}  // namespace

stormark::v1::TargetInfo ReadTargetFacts(const TargetConfig& target, const SystemPaths& paths,
                                         int fd) {
  stormark::v1::TargetInfo info = ReadFacts(target, paths, fd);
  for (const auto& [key, value] : TargetEnvironment(info))
    (*info.mutable_environment())[key] = value;
  return info;
}

}  // namespace stormark::agent
