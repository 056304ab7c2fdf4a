#include "agent/host/environment.h"

#include <dirent.h>

#include <algorithm>
#include <vector>

#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::StrCat;

// The governors of every CPU that has cpufreq, distinct, in CPU order.
std::string CpuGovernor(const std::string& sys_cpu) {
  std::vector<std::string> governors;
  DIR* dir = opendir(sys_cpu.c_str());
  if (dir == nullptr) return "none";
  std::vector<std::string> cpus;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.size() > 3 && name.starts_with("cpu") && std::isdigit(name[3])) cpus.push_back(name);
  }
  closedir(dir);
  std::sort(cpus.begin(), cpus.end(), [](const std::string& a, const std::string& b) {
    return std::stoi(a.substr(3)) < std::stoi(b.substr(3));
  });
  for (const std::string& cpu : cpus) {
    const std::string governor =
        ReadSysfsLine(StrCat(sys_cpu, "/", cpu, "/cpufreq/scaling_governor")).value_or("");
    if (!governor.empty() &&
        std::find(governors.begin(), governors.end(), governor) == governors.end()) {
      governors.push_back(governor);
    }
  }
  if (governors.empty()) return "none";
  std::string out;
  for (const std::string& g : governors) out += StrCat(out.empty() ? "" : ",", g);
  return out;
}

}  // namespace

Environment ReadHostEnvironment(const HostFacts& host, const SystemPaths& paths) {
  Environment env;
  if (!host.kernel.empty()) env["kernel"] = host.kernel;
  if (!host.cpu_model.empty()) env["cpu_model"] = host.cpu_model;
  if (host.cpu_count > 0) env["cpu_count"] = StrCat(host.cpu_count);
  if (host.ram_bytes > 0) env["ram_bytes"] = StrCat(host.ram_bytes);
  env["cpu_governor"] = CpuGovernor(paths.sys_cpu);
  for (const char* key :
       {"dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes",
        "dirty_expire_centisecs", "dirty_writeback_centisecs"}) {
    if (auto value = ReadSysfsLine(StrCat(paths.proc_sys_vm, "/", key))) {
      env[StrCat("vm.", key)] = *value;
    }
  }
  return env;
}

Environment TargetEnvironment(const stormark::v1::TargetInfo& info) {
  Environment env;
  auto put = [&env](const std::string& key, const std::string& value) {
    if (!value.empty()) env[key] = value;
  };
  put("filesystem", info.filesystem());
  put("mount_options", info.mount_options());
  const auto& queue = info.device_queue();
  if (auto it = queue.find("name"); it != queue.end()) put("device", it->second);
  for (const char* key : {"scheduler", "read_ahead_kb", "nr_requests", "rotational", "write_cache",
                          "max_sectors_kb", "queue_depth", "model", "vendor", "backing_file"}) {
    if (auto it = queue.find(key); it != queue.end()) put(key, it->second);
  }
  put("transport", info.transport());
  put("transport_detail", info.transport_detail());
  return env;
}

}  // namespace stormark::agent
