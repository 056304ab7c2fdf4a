"""Transport detection on real sysfs: a qemu guest (vmlab.py) with one disk of each kind admins
have (virtio-blk, virtio-scsi, NVMe, SATA on AHCI, USB storage) runs the agent with a `block:`
target on each, and every target's transport is what the hardware is. Elsewhere these kinds are
only tested on fake sysfs trees; FC cannot be emulated and stays on a recorded tree.

The guest's script names each target after the disk's serial number, which the test gave it, so
the check does not depend on the order in which the kernel named the sd disks.
"""

import json
import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import stormark_harness as h  # noqa: E402
import vmlab  # noqa: E402

MIB = 1 << 20
WHY_NOT = vmlab.missing()

# disk kind -> (the transport, the detail) the agent must report.
EXPECTED = {"virtio": ("local", "virtio"), "scsi": ("local", "virtio-scsi"),
            "nvme": ("local", "nvme"), "sata": ("local", "sata"),
            "usb": ("USB", "usb (usb-storage)")}

# A target per disk, named after its serial ("kind-virtio"): /sys/block/*/serial for virtio,
# device/serial for NVMe, the SCSI VPD page 0x80 for the SCSI and SATA disks; the USB disk is
# the one whose sysfs path runs through the USB bus.
# The SCSI, SATA and USB disks are sd disks; USB storage shows up last, seconds after boot.
GUEST_BEFORE = r"""for i in $(seq 1 120); do
  [ "$(ls /sys/block | grep -c '^sd')" -ge 3 ] && break
  sleep 0.5
done
ls /sys/block
{
echo "targets:"
for d in /sys/block/*; do
  n=$(basename $d)
  case $n in loop*|ram*) continue;; esac
  s=""
  [ -f $d/serial ] && s=$(cat $d/serial)
  [ -z "$s" ] && [ -f $d/device/serial ] && s=$(cat $d/device/serial)
  [ -z "$s" ] && [ -f $d/device/vpd_pg80 ] && s=$(tail -c +5 $d/device/vpd_pg80 | tr -d '\0 ')
  # usb-storage gives the disk no serial of its own (no VPD): it is the one under the USB bus.
  [ -z "$s" ] && readlink -f $d | grep -q /usb && s=kind-usb
  s=$(echo $s | tr -d ' ')
  [ -n "$s" ] && echo "  $s: {block: /dev/$n, disposable: true}"
done
} > /host/tmp/agent.yaml
cat /host/tmp/agent.yaml
"""


@unittest.skipIf(WHY_NOT, WHY_NOT)
class DiskKindsTest(h.StormarkTestCase):

    def test_each_disk_kind_reports_its_transport(self):
        work = self.make_dir("stormark-vm-disks-")
        disks = []
        for kind in EXPECTED:
            path = os.path.join(work, f"{kind}.img")
            with open(path, "wb") as f:
                f.truncate(32 * MIB)
            disks.append(vmlab.Disk(path, kind, serial=f"kind-{kind}"))
        script = GUEST_BEFORE + (f"exec chroot /host {h.bin_dir()}/stormark-agent --listen "
                                 "0.0.0.0:7420 --insecure --config /tmp/agent.yaml\n")
        guest = vmlab.Guest(self, "disks", script, disks=disks).start()
        guest.wait_for(r"listening on", timeout=240)

        json_path = os.path.join(self.make_dir(), "out.json")
        done = subprocess.run([h.binary("stormark"), "run", "--agent",
                               f"127.0.0.1:{guest.port(7420)}", "--target", "kind-virtio",
                               "--workload", "randio", "--set", "rw=randread", "--set",
                               "size=4M", "--set", "direct=true", "--json", json_path, "--no-db",
                               "--no-progress"], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=600)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr +
                         guest.console_text()[-3000:])
        print(done.stdout.split("Phase")[0], file=sys.stderr)
        with open(json_path) as f:
            report = json.load(f)
        targets = {t["name"]: t for t in report["agents"][0]["targets"]}
        for kind, (transport, detail) in EXPECTED.items():
            name = f"kind-{kind}"
            self.assertIn(name, targets, f"no target for the {kind} disk: {sorted(targets)}\n"
                                         f"{guest.console_text()[-3000:]}")
            env = targets[name]["environment"]
            self.assertEqual(env.get("transport"), transport, (kind, env))
            self.assertEqual(env.get("transport_detail"), detail, (kind, env))


if __name__ == "__main__":
    h.main()
