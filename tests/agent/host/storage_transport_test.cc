#include "agent/host/storage_transport.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

// A fake /sys: devices under /sys/devices, linked from /sys/class/block as the
// kernel does.
class TransportTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    paths_ = SystemPaths::UnderRoot(dir());
    std::filesystem::create_directories(paths_.sys_class_block);
  }

  // Creates the device directory `devices_path` (under /sys/devices) of block
  // device `name`, with a queue, and its /sys/class/block link. Returns the
  // directory.
  std::string Disk(const std::string& name, const std::string& devices_path) {
    const std::string real = dir() + "/sys/devices/" + devices_path;
    std::filesystem::create_directories(real + "/queue");
    std::filesystem::create_symlink(real, paths_.sys_class_block + "/" + name);
    return real;
  }
  std::string Partition(const std::string& disk_dir, const std::string& name) {
    const std::string real = disk_dir + "/" + name;
    std::filesystem::create_directories(real);
    Write(real + "/partition", "1");
    std::filesystem::create_symlink(real, paths_.sys_class_block + "/" + name);
    return real;
  }
  void Slave(const std::string& holder_dir, const std::string& slave) {
    std::filesystem::create_directories(holder_dir + "/slaves");
    std::filesystem::create_symlink(paths_.sys_class_block + "/" + slave,
                                    holder_dir + "/slaves/" + slave);
  }
  static void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text << "\n";
  }

  SystemPaths paths_;
};

TEST_F(TransportTest, VirtioDiskAndItsPartition) {
  const std::string vda = Disk("vda", "pci0000:00/0000:00:02.0/virtio1/block/vda");
  Partition(vda, "vda1");
  Write(vda + "/device/vendor", "0x1af4");
  for (const char* name : {"vda", "vda1"}) {
    const DeviceTransport t = DetectTransport(name, paths_);
    EXPECT_EQ(t.label, "local") << name;
    EXPECT_EQ(t.detail, "virtio") << name;
    EXPECT_EQ(t.vendor, "0x1af4") << name;
  }
}

TEST_F(TransportTest, SataNvmeAndSasDisksAreLocalWithTheirModel) {
  const std::string sda =
      Disk("sda", "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda");
  Write(sda + "/device/model", "Samsung SSD 870");
  Write(sda + "/device/vendor", "ATA     ");
  const std::string nvme = Disk("nvme0n1", "pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1");
  Write(nvme + "/device/transport", "pcie");
  Write(nvme + "/device/model", "INTEL SSDPE2KX010T8");
  Disk("sdc",
       "pci0000:00/0000:00:03.0/host2/port-2:0/end_device-2:0/target2:0:0/"
       "2:0:0:0/block/sdc");
  Write(dir() + "/sys/class/scsi_host/host2/proc_name", "mpt3sas");

  DeviceTransport t = DetectTransport("sda", paths_);
  EXPECT_EQ(t.label, "local");
  EXPECT_EQ(t.detail, "sata");
  EXPECT_EQ(t.model, "Samsung SSD 870");
  EXPECT_EQ(t.vendor, "ATA");
  t = DetectTransport("nvme0n1", paths_);
  EXPECT_EQ(t.label, "local");
  EXPECT_EQ(t.detail, "nvme");
  EXPECT_EQ(t.model, "INTEL SSDPE2KX010T8");
  t = DetectTransport("sdc", paths_);
  EXPECT_EQ(t.label, "local");
  EXPECT_EQ(t.detail, "sas (mpt3sas)");
}

TEST_F(TransportTest, IscsiSessionNamesTheTargetAndPortal) {
  const std::string sdb = Disk("sdb", "platform/host3/session1/target3:0:0/3:0:0:0/block/sdb");
  Write(sdb + "/device/model", "VIRTUAL-DISK");
  Write(sdb + "/device/vendor", "IET");
  Write(dir() + "/sys/class/iscsi_session/session1/targetname", "iqn.2026-11.test:disk1");
  Write(dir() + "/sys/class/iscsi_connection/connection1:0/persistent_address", "192.0.2.7");
  Write(dir() + "/sys/class/iscsi_connection/connection1:0/persistent_port", "3260");
  const DeviceTransport t = DetectTransport("sdb", paths_);
  EXPECT_EQ(t.label, "iSCSI");
  EXPECT_EQ(t.detail, "iSCSI session to iqn.2026-11.test:disk1 at 192.0.2.7:3260");
  EXPECT_EQ(t.model, "VIRTUAL-DISK");
  EXPECT_EQ(t.vendor, "IET");
}

TEST_F(TransportTest, FibreChannelNamesTheRemotePort) {
  Disk("sdd",
       "pci0000:00/0000:00:05.0/host5/rport-5:0-2/target5:0:0/5:0:0:0/block/"
       "sdd");
  Write(dir() + "/sys/class/fc_remote_ports/rport-5:0-2/port_name", "0x500507680b21e1a0");
  Write(dir() + "/sys/class/fc_host/host5/port_name", "0x21000024ff3dd0c4");
  const DeviceTransport t = DetectTransport("sdd", paths_);
  EXPECT_EQ(t.label, "FC");
  EXPECT_EQ(t.detail, "fc remote port 0x500507680b21e1a0 via host5 port 0x21000024ff3dd0c4");
}

TEST_F(TransportTest, UsbAoeAndNbd) {
  Disk("sde",
       "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/"
       "block/sde");
  Write(dir() + "/sys/class/scsi_host/host6/proc_name", "uas");
  const std::string aoe = Disk("etherd!e1.0", "virtual/block/etherd!e1.0");
  Write(aoe + "/netif", "eth1");
  Write(aoe + "/firmware-version", "0x4019");  // Not "fwver": the 6.1 driver's name.
  Disk("nbd0", "virtual/block/nbd0");

  DeviceTransport t = DetectTransport("sde", paths_);
  EXPECT_EQ(t.label, "USB");
  EXPECT_EQ(t.detail, "usb (uas)");
  t = DetectTransport("etherd!e1.0", paths_);
  EXPECT_EQ(t.label, "AoE");
  EXPECT_EQ(t.detail, "etherd e1.0 via eth1");
  EXPECT_EQ(t.model, "AoE target, firmware 0x4019");
  t = DetectTransport("nbd0", paths_);
  EXPECT_EQ(t.label, "NBD");
  EXPECT_EQ(t.detail, "nbd");
}

TEST_F(TransportTest, NvmeOverTcpIsNetworkStorage) {
  const std::string nvme = Disk("nvme1n1", "virtual/nvme-fabrics/ctl/nvme1/nvme1n1");
  Write(nvme + "/device/transport", "tcp");
  Write(nvme + "/device/address", "traddr=192.0.2.9,trsvcid=4420");
  const DeviceTransport t = DetectTransport("nvme1n1", paths_);
  EXPECT_EQ(t.label, "NVMe-oF");
  EXPECT_EQ(t.detail, "nvme over tcp to traddr=192.0.2.9,trsvcid=4420");
}

TEST_F(TransportTest, DmAndMdFollowTheirSlavesToThePhysicalDisks) {
  const std::string loop = Disk("loop3", "virtual/block/loop3");
  Write(loop + "/loop/backing_file", "/var/tmp/disk.img");
  const std::string sda =
      Disk("sda", "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda");
  Partition(sda, "sda1");
  Write(sda + "/device/model", "WDC WD40EFRX");
  const std::string sdb = Disk("sdb", "platform/host3/session1/target3:0:0/3:0:0:0/block/sdb");
  Write(dir() + "/sys/class/iscsi_session/session1/targetname", "iqn.2026-11.test:disk1");

  const std::string dm0 = Disk("dm-0", "virtual/block/dm-0");
  Write(dm0 + "/dm/name", "bench-linear");
  Slave(dm0, "loop3");
  const std::string md0 = Disk("md0", "virtual/block/md0");
  Write(md0 + "/md/level", "raid1");
  Slave(md0, "sda1");
  // An LVM volume over the md array and an iSCSI disk: a stack of two levels,
  // two transports.
  const std::string dm1 = Disk("dm-1", "virtual/block/dm-1");
  Write(dm1 + "/dm/name", "vg-mixed");
  Slave(dm1, "md0");
  Slave(dm1, "sdb");

  DeviceTransport t = DetectTransport("dm-0", paths_);
  EXPECT_EQ(t.label, "local");
  EXPECT_EQ(t.detail, "dm bench-linear over loop3 (loop)");
  EXPECT_EQ(t.backing_file, "/var/tmp/disk.img");
  t = DetectTransport("md0", paths_);
  EXPECT_EQ(t.label, "local");
  EXPECT_EQ(t.detail, "md raid1 over sda1 (sata)");
  EXPECT_EQ(t.model, "WDC WD40EFRX");
  t = DetectTransport("dm-1", paths_);
  EXPECT_EQ(t.label, "iSCSI+local");
  EXPECT_EQ(t.detail,
            "dm vg-mixed over md0 (md raid1 over sda1 (sata)), sdb (iSCSI session to "
            "iqn.2026-11.test:disk1)");
}

TEST_F(TransportTest, UnknownDeviceAndNetworkFilesystems) {
  EXPECT_EQ(DetectTransport("sdq", paths_).label, "");
  Disk("zram0", "virtual/block/zram0");
  EXPECT_EQ(DetectTransport("zram0", paths_).detail, "zram");
  const DeviceTransport nfs = FilesystemTransport("nfs4", "filer:/export/bench");
  EXPECT_EQ(nfs.label, "NFS");
  EXPECT_EQ(nfs.detail, "nfs4 to filer:/export/bench");
  EXPECT_EQ(FilesystemTransport("ext4", "/dev/vda").label, "");
}

// What this machine really has: every block device it lists gets a label.
TEST(TransportOnThisMachine, EveryBlockDeviceGetsALabel) {
  const SystemPaths paths;
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(paths.sys_class_block)) {
    const DeviceTransport t = DetectTransport(entry.path().filename().string(), paths);
    EXPECT_FALSE(t.label.empty()) << entry.path();
    EXPECT_FALSE(t.detail.empty()) << entry.path();
    ++seen;
  }
  if (seen == 0) GTEST_SKIP() << "no block devices in " << paths.sys_class_block;
}

}  // namespace
}  // namespace stormark::agent
