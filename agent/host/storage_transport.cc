#include "agent/host/storage_transport.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <set>
#include <vector>

#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::StrCat;

// Stacked devices deeper than this are a loop in a broken tree, not a real
// stack.
constexpr int kMaxDepth = 8;

std::string ReadAttribute(const std::string& path) { return ReadSysfsLine(path).value_or(""); }

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : "";
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return names;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// The components of a /sys/devices path, from the root down.
std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> parts;
  for (std::string_view part : common::Split(path, '/')) {
    if (!part.empty()) parts.emplace_back(part);
  }
  return parts;
}

// The first component starting with `prefix` (and, if `digit`, followed by a
// digit).
std::string Component(const std::vector<std::string>& parts, std::string_view prefix,
                      bool digit = false) {
  for (const std::string& part : parts) {
    if (!part.starts_with(prefix)) continue;
    if (digit && (part.size() == prefix.size() || !std::isdigit(part[prefix.size()]))) continue;
    return part;
  }
  return "";
}

// A device name without its number: "zram0" -> "zram".
std::string DriverStem(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  return name.substr(0, end);
}

DeviceTransport Of(std::string label, std::string detail) {
  DeviceTransport t;
  t.label = std::move(label);
  t.detail = std::move(detail);
  return t;
}

std::string JoinDistinct(const std::vector<std::string>& values) {
  std::vector<std::string> seen;
  for (const std::string& v : values) {
    if (!v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  }
  std::string out;
  for (const std::string& v : seen) out += StrCat(out.empty() ? "" : ", ", v);
  return out;
}

// A SCSI disk's transport from the SCSI host and what sits between it and the
// disk.
DeviceTransport ScsiTransport(const std::vector<std::string>& parts, const SystemPaths& paths) {
  const std::string host = Component(parts, "host", /*digit=*/true);
  const std::string proc_name =
      host.empty() ? "" : ReadAttribute(StrCat(paths.sys_class, "/scsi_host/", host, "/proc_name"));
  if (const std::string session = Component(parts, "session", true); !session.empty()) {
    const std::string number = session.substr(7);
    const std::string iqn =
        ReadAttribute(StrCat(paths.sys_class, "/iscsi_session/", session, "/targetname"));
    // The session's first connection carries the portal.
    std::string portal;
    for (const std::string& conn : ListDir(StrCat(paths.sys_class, "/iscsi_connection"))) {
      if (!conn.starts_with(StrCat("connection", number, ":"))) continue;
      const std::string dir = StrCat(paths.sys_class, "/iscsi_connection/", conn);
      std::string address = ReadAttribute(dir + "/persistent_address");
      if (address.empty()) address = ReadAttribute(dir + "/address");
      std::string port = ReadAttribute(dir + "/persistent_port");
      if (port.empty()) port = ReadAttribute(dir + "/port");
      if (!address.empty()) portal = port.empty() ? address : StrCat(address, ":", port);
      break;
    }
    return Of("iSCSI", StrCat("iSCSI session to ", iqn.empty() ? "?" : iqn,
                              portal.empty() ? "" : StrCat(" at ", portal)));
  }
  if (const std::string rport = Component(parts, "rport-"); !rport.empty()) {
    const std::string wwpn =
        ReadAttribute(StrCat(paths.sys_class, "/fc_remote_ports/", rport, "/port_name"));
    const std::string local =
        host.empty() ? "" : ReadAttribute(StrCat(paths.sys_class, "/fc_host/", host, "/port_name"));
    return Of("FC", StrCat("fc remote port ", wwpn.empty() ? rport : wwpn,
                           local.empty() ? "" : StrCat(" via ", host, " port ", local)));
  }
  if (!Component(parts, "usb", true).empty()) {
    return Of("USB", proc_name.empty() ? "usb" : StrCat("usb (", proc_name, ")"));
  }
  if (!Component(parts, "end_device-").empty() || !Component(parts, "port-").empty()) {
    return Of("local", proc_name.empty() ? "sas" : StrCat("sas (", proc_name, ")"));
  }
  if (!Component(parts, "ata", true).empty()) return Of("local", "sata");
  if (!Component(parts, "virtio", true).empty()) return Of("local", "virtio-scsi");
  return Of("local", proc_name.empty() ? "scsi" : StrCat("scsi (", proc_name, ")"));
}

DeviceTransport NvmeTransport(const std::string& disk) {
  const std::string transport = ReadAttribute(disk + "/device/transport");
  if (transport.empty() || transport == "pcie") return Of("local", "nvme");
  if (transport == "loop") return Of("local", "nvme loop");
  const std::string address = ReadAttribute(disk + "/device/address");
  return Of(transport == "fc" ? "FC" : "NVMe-oF",
            StrCat("nvme over ", transport, address.empty() ? "" : StrCat(" to ", address)));
}

DeviceTransport Detect(const std::string& name, const SystemPaths& paths, int depth);

// dm and md: the transports of the slaves, joined.
DeviceTransport Stacked(const std::string& disk, const std::string& kind, const SystemPaths& paths,
                        int depth) {
  std::vector<std::string> labels, details, models, vendors, backing;
  for (const std::string& slave : ListDir(disk + "/slaves")) {
    const DeviceTransport t = Detect(slave, paths, depth + 1);
    labels.push_back(t.label);
    details.push_back(StrCat(slave, t.detail.empty() ? "" : StrCat(" (", t.detail, ")")));
    models.push_back(t.model);
    vendors.push_back(t.vendor);
    backing.push_back(t.backing_file);
  }
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  labels.erase(std::remove(labels.begin(), labels.end(), ""), labels.end());
  std::string label;
  for (const std::string& l : labels) label += StrCat(label.empty() ? "" : "+", l);
  std::string what = kind;
  if (kind == "md") {
    const std::string level = ReadAttribute(disk + "/md/level");
    if (!level.empty()) what += " " + level;
  } else {
    const std::string dm_name = ReadAttribute(disk + "/dm/name");
    if (!dm_name.empty()) what += " " + dm_name;
  }
  const std::string over = JoinDistinct(details);
  DeviceTransport t =
      Of(label.empty() ? "local" : label, over.empty() ? what : StrCat(what, " over ", over));
  t.model = JoinDistinct(models);
  t.vendor = JoinDistinct(vendors);
  t.backing_file = JoinDistinct(backing);
  return t;
}

DeviceTransport Detect(const std::string& name, const SystemPaths& paths, int depth) {
  std::string disk = RealPath(StrCat(paths.sys_class_block, "/", name));
  if (disk.empty() || depth > kMaxDepth) return {};
  if (Exists(disk + "/partition")) disk = disk.substr(0, disk.rfind('/'));
  const std::string disk_name = BaseName(disk);
  if (Exists(disk + "/dm")) return Stacked(disk, "dm", paths, depth);
  if (Exists(disk + "/md")) return Stacked(disk, "md", paths, depth);

  DeviceTransport t;
  const std::vector<std::string> parts = Components(disk);
  if (disk_name.starts_with("loop")) {
    t = Of("local", "loop");
    t.backing_file = ReadAttribute(disk + "/loop/backing_file");
  } else if (disk_name.starts_with("nbd")) {
    t = Of("NBD", "nbd");
  } else if (disk_name.starts_with("etherd!")) {
    // The aoe driver names its disks etherd!eSHELF.SLOT and gives the interface in netif,
    // the target's firmware in firmware-version (aoeblk.c; read on a guest's 6.1 kernel).
    const std::string netif = ReadAttribute(disk + "/netif");
    const std::string firmware = ReadAttribute(disk + "/firmware-version");
    t = Of("AoE", StrCat("etherd ", disk_name.substr(7), netif.empty() ? "" : " via " + netif));
    if (!firmware.empty()) t.model = StrCat("AoE target, firmware ", firmware);
    return t;
  } else if (disk_name.starts_with("nvme")) {
    t = NvmeTransport(disk);
  } else if (!Component(parts, "target", true).empty()) {
    t = ScsiTransport(parts, paths);
  } else if (!Component(parts, "usb", true).empty()) {
    t = Of("USB", "usb");
  } else if (!Component(parts, "virtio", true).empty()) {
    t = Of("local", "virtio");
  } else if (!Component(parts, "vbd-").empty()) {
    t = Of("local", "xen");
  } else if (!Component(parts, "mmc", true).empty()) {
    t = Of("local", "mmc");
  } else if (Component(parts, "virtual").empty() && Exists(disk + "/device/driver")) {
    t = Of("local", BaseName(RealPath(disk + "/device/driver")));
  } else {
    // zram, ram, pmem and other devices of no bus: memory or a driver of its
    // own.
    t = Of("local", DriverStem(disk_name));
  }
  t.model = ReadAttribute(disk + "/device/model");
  t.vendor = ReadAttribute(disk + "/device/vendor");
  return t;
}

}  // namespace

DeviceTransport DetectTransport(std::string_view name, const SystemPaths& paths) {
  return Detect(std::string(name), paths, 0);
}

DeviceTransport FilesystemTransport(std::string_view fstype, std::string_view source) {
  const std::string type(fstype);
  if (type == "nfs" || type == "nfs4") return Of("NFS", StrCat(type, " to ", source));
  if (type == "cifs" || type == "smb3") return Of("SMB", StrCat(type, " to ", source));
  return {};
}

}  // namespace stormark::agent
