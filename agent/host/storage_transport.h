// How a kernel-attached block device is reached, read from sysfs: the label a comparison
// table shows ("local", "AoE", "iSCSI", "NBD", "FC", "USB", "NVMe-oF") and the detail behind
// it ("sata", "virtio", "loop", "dm vg-lv over sda (sata)", "iSCSI session to IQN at ADDR:PORT").
//
// The walk: /sys/class/block/NAME; a partition is read as its disk; dm and md devices are
// followed down their slaves to the physical disks; then the disk's directory under
// /sys/devices names its bus (virtio, usb, ata, nvme, a SCSI host with an iSCSI session or an
// FC remote port, a SAS end device), and the classes under /sys/class give the remote end
// (iscsi_session and iscsi_connection, fc_remote_ports and fc_host, scsi_host).
//
// Pure reads of the paths in SystemPaths, so tests run on a fake tree. Never fails: what
// cannot be read is left out. Thread-safe.
#ifndef STORMARK_AGENT_HOST_STORAGE_TRANSPORT_H_
#define STORMARK_AGENT_HOST_STORAGE_TRANSPORT_H_

#include <string>
#include <string_view>

#include "agent/host/system_paths.h"

namespace stormark::agent {

struct DeviceTransport {
  // The row label; "" when the device is unknown to sysfs.
  std::string label;
  // The bus, driver or remote end.
  std::string detail;
  // From the physical disks' sysfs attributes; several disks' distinct values are joined
  // with ", ". Empty where the driver exposes none.
  std::string model;
  std::string vendor;
  // A loop device's backing file (of the stack's loop devices, joined with ", "). Kept out of
  // `detail`, since it names one host's file rather than a setting.
  std::string backing_file;
};

// The transport of block device `name` as /sys/class/block names it ("sda1", "dm-0",
// "nvme0n1", "loop3", "etherd!e1.0").
DeviceTransport DetectTransport(std::string_view name, const SystemPaths& paths);

// A network filesystem's transport from its mountinfo type and source ("nfs4",
// "server:/export" -> {"NFS", "nfs4 to server:/export"}); empty label for any other type.
DeviceTransport FilesystemTransport(std::string_view fstype, std::string_view source);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_HOST_STORAGE_TRANSPORT_H_
