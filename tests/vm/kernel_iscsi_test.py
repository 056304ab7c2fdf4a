"""Kernel iSCSI against the agent's user-space iSCSI initiator, on one tgtd LUN, in one run: a qemu
guest (vmlab.py) logs in to tgtd (on the host's loopback, reached through qemu's user-mode network)
with open-iscsi (Debian's iscsid and iscsiadm, the kernel's iscsi_tcp), and its agent serves the
disk the kernel made of the LUN as a `block:` target; an agent on the host serves the same LUN as
an `iscsi://` target through its own initiator (libiscsi). One plan runs the same direct random
reads on both, one host after the other.

- The guest's row is detected as iSCSI on real sysfs (the session's SCSI host, its target name
  and the connection's portal, not a fake tree), and its disk's own counters saw what the
  workload read (within 2%).
- The host's row is iSCSI too, with the user-space initiator named in its transport detail.
- The guest's CPU is emulated, and its row says its figures measure the emulator.
- The session's second LUN, with ext4 made on it in the guest and mounted, is a `dir:` target:
  a stream phase writes and reads a file on it, its row is iSCSI with ext4 on /dev/sdb, and
  sdb's own counters saw the direct writes and reads.
- A pulled cable: the guest's iSCSI runs on a NIC of its own, whose link is set down (qemu's
  set_link) while the kernel's I/O is in flight. The kernel queues it through the session's
  recovery, so the phase fails at its deadline naming the call stuck in the kernel, while the
  host's user-space initiator, in the same plan, on the same LUN, ends its phase as usual; the
  cable back in, iscsid logs in again (a new session at tgtd), the I/O returns and the agent
  takes phases again.
"""

import os
import re
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402
import vmlab  # noqa: E402

MIB = 1 << 20
GUEST_IQN = "iqn.2024-01.org.stormark.test:guest"
ISCSID, ISCSIADM = "/usr/sbin/iscsid", "/usr/sbin/iscsiadm"
WHY_NOT = vmlab.missing() or ("" if net.have("tgtd", "tgtadm") and os.path.exists(ISCSID) and
                              os.path.exists(ISCSIADM)
                              else "needs tgt and open-iscsi (scripts/install-deps.sh test)")

# The guest's side, before its agent starts. open-iscsi keeps its initiator name and its node
# records in /etc/iscsi, read-only in the guest's view of the host: a tmpfs goes over it, with
# this guest's own name and settings (a NOP-Out every 5 s finds a dead connection within 10 s;
# the session then holds its I/O for up to 120 s while iscsid logs in again). tgtd's
# SendTargets answer names its own portal, 127.0.0.1, which in the guest is the guest: the
# node is made by hand at the address the guest reaches tgtd by.
LOGIN = r"""mount -t tmpfs tmpfs /host/etc/iscsi
echo InitiatorName=@GUEST_IQN@ > /host/etc/iscsi/initiatorname.iscsi
cat > /host/etc/iscsi/iscsid.conf <<'STORMARK_ISCSI_EOF'
node.startup = manual
node.session.timeo.replacement_timeout = 120
node.conn[0].timeo.noop_out_interval = 5
node.conn[0].timeo.noop_out_timeout = 5
STORMARK_ISCSI_EOF
mkdir -p /host/run/lock
chroot /host @ISCSID@ || echo "STORMARK-ISCSI-FAILED: iscsid"
chroot /host @ISCSIADM@ -m node -o new -T @IQN@ -p @PORTAL@ >/dev/null &&
  chroot /host @ISCSIADM@ -m node -T @IQN@ -p @PORTAL@ --login ||
  echo "STORMARK-ISCSI-FAILED: login"
# The disk the kernel made of the session's LUN 1 (LUN 0 is tgtd's controller, no disk).
for i in $(seq 1 100); do
  disk=$(ls /sys/class/iscsi_session/session*/device/target*/*:1/block 2>/dev/null)
  [ -n "$disk" ] && break
  sleep 0.2
done
echo "STORMARK-ISCSI-DISK ${disk:-none}"
"""

# The disk the kernel made of LUN 2, for a filesystem (boot's fs_lun). The test adds LUN 2 once
# LUN 1 is a disk, so that the names are sure (a session that finds two LUNs at login names them
# in whichever order its scans end); the session is rescanned until it shows.
FS_LUN = r"""for i in $(seq 1 120); do
  chroot /host @ISCSIADM@ -m session --rescan >/dev/null 2>&1
  fsdisk=$(ls /sys/class/iscsi_session/session*/device/target*/*:2/block 2>/dev/null)
  [ -n "$fsdisk" ] && break
  sleep 0.5
done
echo "STORMARK-ISCSI-FS-DISK ${fsdisk:-none}"
"""

# The guest's second NIC, on a user-mode network of its own (vmlab's user_nets): its cable
# can be pulled while the agent's own network, on eth0, stays up.
SAN_NIC = """ip link set eth1 up
ip addr add 10.0.3.15/24 dev eth1
"""


def guest_sessions(tgtd):
    """The I_T nexus numbers tgtd holds for the guest's initiator: a new login is a new one."""
    shown = tgtd.adm("--lld", "iscsi", "--mode", "target", "--op", "show").stdout
    return set(re.findall(r"I_T nexus: (\d+)\s+Initiator: " + re.escape(GUEST_IQN) + " ", shown))


@unittest.skipIf(WHY_NOT, WHY_NOT)
class KernelIscsiTest(h.StormarkTestCase):

    def boot(self, tgtd, san=False, config_extra="", fs_lun=None):
        """A guest whose kernel is logged in to `tgtd`'s LUN, served as the `block:` target
        kiscsi; over eth0 (tgtd at 10.0.2.2), or with `san` over a NIC of its own whose cable
        `guest.set_link("san", ...)` pulls (tgtd at 10.0.3.2). Returns (guest, portal)."""
        portal = f"{'10.0.3.2' if san else '10.0.2.2'}:{tgtd.port}"
        before = SAN_NIC if san else ""
        before += LOGIN.replace("@ISCSID@", ISCSID).replace("@ISCSIADM@", ISCSIADM).replace(
            "@GUEST_IQN@", GUEST_IQN).replace("@IQN@", tgtd.iqn).replace("@PORTAL@", portal)
        # The guest has no other SCSI disk: the LUN is sda, checked on the console below.
        config = config_extra + "targets:\n  kiscsi: {block: /dev/sda, disposable: true}\n"
        if fs_lun:
            # LUN 2 (FS_LUN above) is sdb, with ext4 made on it and mounted: a dir: target.
            # `fs_lun` adds it at tgtd once the guest has made sda of LUN 1.
            before += FS_LUN.replace("@ISCSIADM@", ISCSIADM) + vmlab.ext4_script(
                "/dev/sdb", "/tmp/iscsifs")
            config += "  kiscsifs: {dir: /tmp/iscsifs}\n"
        guest = vmlab.Guest(self, "kiscsi", vmlab.agent_script(h.bin_dir(), config, before=before),
                            extra_modules=("iscsi_tcp",), user_nets=["san"] if san else ()).start()
        if fs_lun:
            guest.wait_for(r"STORMARK-ISCSI-DISK \w+", timeout=240)
            fs_lun()
        guest.wait_for(r"listening on", timeout=240)
        console = guest.console_text()
        self.assertNotIn("STORMARK-ISCSI-FAILED", console, console[-3000:])
        self.assertRegex(console, r"STORMARK-ISCSI-DISK sda\r?\n", console[-3000:])
        if fs_lun:
            self.assertRegex(console, r"STORMARK-ISCSI-FS-DISK sdb\r?\n", console[-3000:])
            self.assertNotIn("STORMARK-FS-FAILED", console, console[-3000:])
        return guest, portal

    def test_kernel_and_user_space_iscsi_side_by_side(self):
        backing = net.make_backing_file(os.path.join(self.make_dir(), "lun.img"), 128 * MIB)
        tgtd = net.Tgtd(self, backing)
        fs_backing = net.make_backing_file(os.path.join(self.make_dir(), "fs.img"), 128 * MIB)

        def add_fs_lun():  # LUN 2, for the guest's filesystem.
            tgtd.adm("--lld", "iscsi", "--mode", "logicalunit", "--op", "new", "--tid", "1",
                     "--lun", "2", "--backing-store", fs_backing)
        # Both initiators log in from 127.0.0.1 as tgtd sees them (qemu's user-mode network
        # connects from the host's loopback), which is the address its ACL allows.
        guest, portal = self.boot(tgtd, fs_lun=add_fs_lun)
        host_agent = self.start_agent("uiscsi", extra_targets=(
            f"  uiscsi: {{iscsi: '{tgtd.uri}', disposable: true}}\n"))

        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""mode: sequential
hosts:
  - {{name: kernel, address: "127.0.0.1:{guest.port(7420)}", target: kiscsi}}
  - {{name: user-space, address: "{host_agent.address}", target: uiscsi}}
phases:
  - {{name: r, workload: randio, rw: randread, bs: 4k, size: 64M, direct: true,
      time_based: true, runtime: 3s, iodepth: 4, engine: libaio}}
""")
        json_path = os.path.join(work, "out.json")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--no-db",
                                    "--no-progress"], timeout=600)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0,
                         result.describe() + guest.console_text()[-2000:])
        print(result.stdout, file=sys.stderr)
        rows = {r["host"]: r for r in self.load_json(json_path)["phases"][0]["results"]}
        kernel, user = rows["kernel"], rows["user-space"]
        for row in (kernel, user):
            self.assertEqual(row["status"], "succeeded", row)
        k_env, u_env = kernel["environment"]["target"], user["environment"]["target"]
        self.assertEqual(k_env["transport"], "iSCSI", k_env)
        self.assertEqual(k_env["transport_detail"], f"iSCSI session to {tgtd.iqn} at {portal}",
                         k_env)
        self.assertEqual(u_env["transport"], "iSCSI", u_env)
        self.assertEqual(u_env["transport_detail"],
                         f"user-space iSCSI initiator to 127.0.0.1:{tgtd.port} target "
                         f"{tgtd.iqn} LUN 1", u_env)
        table = [t for t in h.phase_tables(result.stdout) if " r:" in t["title"]][0]
        for host in ("kernel", "user-space"):
            via = [w for w in h.rows_for(table, host)[0].split() if w != "!"][1]
            self.assertEqual(via, "iSCSI", table)
        # The disk is tgtd's: SCSI INQUIRY's vendor and product as tgt answers them.
        self.assertEqual((k_env["vendor"], k_env["model"]), ("IET", "VIRTUAL-DISK"), k_env)

        stats = kernel["device_stats"]
        self.assertEqual(stats["disk"], "sda", stats)
        read = sum(m["bytes"] for m in kernel["measurements"] if m["name"] == "read")
        self.assertGreater(read, 0)
        self.assertLessEqual(abs(int(stats["disk.read_bytes"]) - read), 0.02 * read, stats)

        self.assertTrue([w for w in kernel["warnings"] if "emulated" in w], kernel["warnings"])
        self.assertFalse([w for w in user["warnings"] if "emulated" in w], user["warnings"])

        # The filesystem on the session's second LUN, as a dir: target.
        print(vmlab.check_stream_on_filesystem(self, guest, "kiscsifs", "/dev/sdb", "iSCSI"),
              file=sys.stderr)

    def test_a_pulled_cable_under_kernel_iscsi_io_fails_the_phase_in_its_bound(self):
        # The guest's iSCSI NIC goes down while its kernel is reading and writing: the session
        # holds the I/O through its recovery (up to 120 s), so the 4 s phase fails at its 8 s
        # deadline naming the stuck call, and the host's user-space initiator, in the same
        # plan and on the same LUN, ends its 4 s as usual.
        backing = net.make_backing_file(os.path.join(self.make_dir(), "lun.img"), 64 * MIB)
        tgtd = net.Tgtd(self, backing)
        guest, _ = self.boot(tgtd, san=True, config_extra="stuck_worker_after: 2s\n")
        host_agent = self.start_agent("uiscsi", extra_targets=(
            f"  uiscsi: {{iscsi: '{tgtd.uri}', disposable: true}}\n"))
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
hosts:
  - {{name: guest, address: "127.0.0.1:{guest.port(7420)}", target: kiscsi}}
  - {{name: other, address: "{host_agent.address}", target: uiscsi}}
phases:
  - {{name: cut, workload: randio, rw: randrw, bs: 64k, size: 16M, direct: true, runtime: 4s,
     time_based: true}}
""")
        json_path = os.path.join(self.make_dir(), "out.json")
        ctl = self.start_stormark(["run", "--plan", plan, "--deadline", "8s",
                                   "--heartbeat-interval", "500ms", "--json", json_path,
                                   "--no-db", "--no-progress"])
        guest.wait_for(r"run phase", timeout=120)
        time.sleep(1)  # I/O in flight.
        logged_in = guest_sessions(tgtd)
        self.assertEqual(len(logged_in), 1, logged_in)
        guest.set_link("san", False)
        started = time.monotonic()
        result = ctl.wait(timeout=120)
        took = time.monotonic() - started
        print(result.stdout, file=sys.stderr)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        # Bounded: the 8 s deadline from the start, the agent's 2 s to call the worker stuck.
        self.assertLess(took, 30, result.stdout)
        rows = {r["host"]: r for r in self.load_json(json_path)["phases"][0]["results"]}
        self.assertEqual(rows["guest"]["status"], "failed", rows["guest"])
        self.assertIn("phase deadline: ran ", rows["guest"]["error"])
        self.assertRegex(rows["guest"]["error"], r"worker stuck in the kernel in (pread64|"
                                                 r"pwrite64|read|write)[^;]* on /dev/sda "
                                                 r"for \d+ s")
        self.assertNotIn("no heartbeat", rows["guest"]["error"])  # The guest's agent answered.
        self.assertEqual(rows["other"]["status"], "succeeded", rows["other"])
        # Out long enough for the kernel to call the connection dead (a NOP-Out unanswered:
        # 5 + 5 s), so that what brings the I/O back is iscsid's new login, not TCP's
        # retransmission. (tgtd keeps the old session: qemu's user-mode network still holds its
        # end of the old connection.)
        time.sleep(max(0.0, started + 20 - time.monotonic()))
        # The cable back in: iscsid logs in again, the held I/O returns, phases run again.
        guest.set_link("san", True)
        deadline = time.monotonic() + 90
        while True:
            again = self.run_stormark(["run", "--agent", f"127.0.0.1:{guest.port(7420)}",
                                       "--target", "kiscsi", "--rw", "read", "--size", "1M",
                                       "--no-db", "--no-progress"], timeout=120)
            if again.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(2)
        self.assertEqual(again.returncode, 0, again.describe() + guest.console_text()[-2000:])
        self.assertTrue(guest_sessions(tgtd) - logged_in, "no new login of the guest at tgtd")


if __name__ == "__main__":
    h.main()
