// Where the agent reads and changes the system's settings: the one place that knows the
// sysfs and procfs paths. Tests point every field into a fake tree (UnderRoot).
#ifndef STORMARK_AGENT_HOST_SYSTEM_PATHS_H_
#define STORMARK_AGENT_HOST_SYSTEM_PATHS_H_

#include <optional>
#include <string>

namespace stormark::agent {

struct SystemPaths {
  std::string drop_caches = "/proc/sys/vm/drop_caches";
  // A directory per block device and partition (symlinks into /sys/devices).
  std::string sys_class_block = "/sys/class/block";
  // MAJ:MIN -> the device's directory, for the device behind a file's st_dev.
  std::string sys_dev_block = "/sys/dev/block";
  // iscsi_session, iscsi_connection, fc_host, fc_remote_ports, scsi_host.
  std::string sys_class = "/sys/class";
  // cpuN/cpufreq/scaling_governor.
  std::string sys_cpu = "/sys/devices/system/cpu";
  // The vm.* sysctls (dirty_ratio, ...).
  std::string proc_sys_vm = "/proc/sys/vm";
  // Where the agent looks for its own threads stuck in the kernel.
  std::string proc_self = "/proc/self";
  // One entry per journal of a mounted ext3/ext4 filesystem ("vda1-8").
  std::string proc_fs_jbd2 = "/proc/fs/jbd2";

  // Every path above, under `root` instead of "/" (for fake trees in tests).
  static SystemPaths UnderRoot(const std::string& root) {
    SystemPaths paths;
    for (std::string* path :
         {&paths.drop_caches, &paths.sys_class_block, &paths.sys_dev_block, &paths.sys_class,
          &paths.sys_cpu, &paths.proc_sys_vm, &paths.proc_self, &paths.proc_fs_jbd2}) {
      *path = root + *path;
    }
    return paths;
  }
};

// The first line of a sysfs or procfs attribute, without surrounding blanks; nullopt when
// it cannot be read.
std::optional<std::string> ReadSysfsLine(const std::string& path);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_HOST_SYSTEM_PATHS_H_
