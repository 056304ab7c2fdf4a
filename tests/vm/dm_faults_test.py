"""Faults a kernel can make, under a target: device-mapper in a qemu guest (vmlab.py), over three
virtio disks, with the guest's own dm-delay, dm-flakey and dm-linear, the agent serving each
dm device as a `block:` target. Each fault must give the documented outcome, and the run goes on
for the other host (an agent on this machine, on a local directory, in the same plan).

- dm-delay (20 ms on every I/O): the phase succeeds; its p50 latency is at least the delay, and
  the row is detected as dm over its disk on real sysfs (`dm slow over vda (virtio)`);
- dm-flakey (reliable until the phase's writes reach it, then down: every I/O fails): a
  random-write phase FAILS on the guest with the kernel's I/O error, within its runtime; the other
  host's row is ok;
- a suspended dm device (`dmsetup suspend` once writes reach it): a real D state. The phase
  fails at its deadline naming the call stuck in the kernel, heartbeats go on, the agent refuses
  new phases while its worker is stuck and takes them again once the guest resumes the device.

The figures of an emulated guest (TCG) mean nothing except against the 20 ms the test injects.
"""

import os
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import stormark_harness as h  # noqa: E402
import vmlab  # noqa: E402

MIB = 1 << 20
DMSETUP = "/usr/sbin/dmsetup"
WHY_NOT = vmlab.missing() or ("" if os.access(DMSETUP, os.X_OK)
                              else "needs dmsetup (scripts/install-deps.sh test)")
DELAY_MS = 20


def jiffy_ms():
    """One tick of the guest kernel's clock in ms: dm-delay keeps its deadline in jiffies
    (expires = jiffies + msecs_to_jiffies(delay), flushed once jiffies reach it), so an I/O
    submitted just before a tick waits up to one jiffy less than the delay. Debian's kernel has
    CONFIG_HZ=250 (4 ms); its config file says so when it is there."""
    vmlinuz, _ = vmlab.kernel()
    config = vmlinuz.replace("vmlinuz-", "config-") if vmlinuz else ""
    if os.path.exists(config):
        for line in open(config, encoding="utf-8"):
            if line.startswith("CONFIG_HZ="):
                return 1000.0 / int(line.split("=")[1])
    return 4.0
SUSPENDED_S = 25  # How long the guest keeps the device suspended.

# Busybox's shell in the guest; dmsetup is the host's, run in the host's root (without udev:
# --noudevsync, and mknodes makes /dev/mapper/NAME).
GUEST_BEFORE = f"""for i in $(seq 1 100); do [ -b /dev/vdc ] && break; sleep 0.2; done
dm() {{ chroot /host {DMSETUP} --noudevsync "$@"; }}
dm create slow --table "0 $(cat /sys/block/vda/size) delay /dev/vda 0 {DELAY_MS}"
dm create flaky --table "0 $(cat /sys/block/vdb/size) flakey /dev/vdb 0 3600 0"
dm create susp --table "0 $(cat /sys/block/vdc/size) linear /dev/vdc 0"
chroot /host {DMSETUP} mknodes
ls /host/dev/mapper
# Waits until writes have reached dm-$1 (field 5 of its stat: writes completed), then 1 s more.
written() {{ while [ "$(awk '{{print $5}}' /sys/block/dm-$1/stat)" = "0" ]; do sleep 0.1; done; sleep 1; }}
# flaky: reliable until the phase writes to it, then down (every I/O fails) for good.
( written 1
  dm reload flaky --table "0 $(cat /sys/block/vdb/size) flakey /dev/vdb 0 0 3600" &&
    dm resume flaky && echo STORMARK-FLAKY-DOWN ) &
# susp: suspended once the phase writes to it, resumed {SUSPENDED_S} s later.
( written 2
  dm suspend susp && echo STORMARK-SUSPENDED
  sleep {SUSPENDED_S}
  dm resume susp && echo STORMARK-RESUMED ) &
"""

CONFIG = """stuck_worker_after: 2s
targets:
  slow: {block: /dev/mapper/slow, disposable: true}
  flaky: {block: /dev/mapper/flaky, disposable: true}
  susp: {block: /dev/mapper/susp, disposable: true}
"""


@unittest.skipIf(WHY_NOT, WHY_NOT)
class DmFaultsTest(h.StormarkTestCase):

    def setUp(self):
        work = self.make_dir("stormark-vm-dm-")
        disks = []
        for name in ("slow", "flaky", "susp"):
            path = os.path.join(work, f"{name}.img")
            with open(path, "wb") as f:
                f.truncate(64 * MIB)
            disks.append(vmlab.Disk(path, "virtio", serial=name))
        script = vmlab.agent_script(h.bin_dir(), CONFIG, before=GUEST_BEFORE)
        self.guest = vmlab.Guest(self, "dm", script, disks=disks,
                                 extra_modules=("dm-mod", "dm-delay", "dm-flakey")).start()
        self.local = self.start_agent("dm-local")
        self.guest.wait_for(r"listening on", timeout=300)
        self.address = f"127.0.0.1:{self.guest.port(7420)}"
        self.assertIn("slow", self.guest.console_text())

    def plan(self, target, phase, extra=""):
        return self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
hosts:
  - {{name: guest, address: "{self.address}", target: {target}}}
  - {{name: local, address: "{self.local.address}", target: scratch}}
{extra}phases:
  - {phase}
""")

    def run_plan(self, plan, *flags, timeout=300):
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--no-db",
                                    "--no-progress", *flags], timeout=timeout)
        self.assert_no_crash(result)
        if os.environ.get("STORMARK_SHOW_OUTPUT"):
            print(result.stdout, file=sys.stderr)
        phase = self.load_json(json_path)["phases"][0]
        rows = {r["host"]: r for r in phase["results"]}
        return result, rows

    def test_delay_flakey_and_suspend_give_their_documented_outcomes(self):
        # dm-delay: every I/O waits 20 ms; the phase succeeds and its latency shows the delay.
        result, rows = self.run_plan(self.plan(
            "slow", "{name: slow, workload: randio, rw: randread, bs: 4k, size: 8M, "
                    "direct: true, runtime: 3s, time_based: true}"))
        self.assertEqual(result.returncode, 0, result.describe())
        guest = rows["guest"]
        self.assertEqual(guest["status"], "succeeded", guest)
        self.assertEqual(guest["environment"]["target"]["transport_detail"],
                         "dm slow over vda (virtio)", guest["environment"]["target"])
        self.assertEqual(guest["latency"]["unit"], "ns")
        # No I/O returns before the delay less one jiffy (dm-delay's deadline is in ticks); the
        # median, with the emulated guest's own I/O time on top, is past the delay.
        self.assertGreaterEqual(guest["latency"]["p50"], DELAY_MS * 1e6, result.stdout)
        self.assertGreaterEqual(guest["latency"]["min"], (DELAY_MS - jiffy_ms()) * 1e6,
                                result.stdout)
        self.assertEqual(rows["local"]["status"], "succeeded", rows["local"])

        # dm-flakey: reliable until the phase writes, then every I/O fails: the guest's phase
        # fails with the kernel's error within its runtime, and the local host's row stands.
        started = time.monotonic()
        result, rows = self.run_plan(self.plan(
            "flaky", "{name: flaky, workload: randio, rw: randwrite, bs: 4k, size: 8M, "
                     "direct: true, runtime: 6s, time_based: true}"))
        self.assertLess(time.monotonic() - started, 120, result.describe())
        self.assertEqual(result.returncode, 1, result.describe())
        guest = rows["guest"]
        self.assertEqual(guest["status"], "failed", guest)
        self.assertIn("Input/output error", guest["error"], guest)
        self.assertEqual(rows["local"]["status"], "succeeded", rows["local"])
        self.assertIn("x guest: ", result.stdout)
        self.assertIn("STORMARK-FLAKY-DOWN", self.guest.console_text())

        # A suspended dm device: writes wait in the kernel (D state) until it is resumed.
        result, rows = self.run_plan(self.plan(
            "susp", "{name: susp, workload: stream, rw: write, size: 48M, bs: 4k, "
                    "direct: true, fdatasync: false}"),
            "--deadline", "5s", "--heartbeat-interval", "500ms", "--heartbeat-timeout", "4s")
        self.assertIn("STORMARK-SUSPENDED", self.guest.console_text())
        self.assertEqual(result.returncode, 1, result.describe())
        guest = rows["guest"]
        self.assertEqual(guest["status"], "failed", guest)
        self.assertIn("phase deadline: ran ", guest["error"])
        self.assertRegex(guest["error"], r"worker stuck in the kernel in (write|pwrite64|"
                                         r"fdatasync|io_submit|io_uring_enter)[^;]* for \d+ s")
        self.assertNotIn("no heartbeat", guest["error"])  # The agent kept answering.
        self.assertEqual(rows["local"]["status"], "succeeded", rows["local"])
        # While stuck the agent refuses a phase, saying why; once resumed it takes one again.
        again = self.run_stormark(["run", "--agent", self.address, "--target", "slow",
                                   "--rw", "read", "--size", "1M", "--no-db", "--no-progress"])
        self.assertEqual(again.returncode, 1, again.describe())
        self.assertIn("stuck in the kernel", again.stdout + again.stderr)
        self.guest.wait_for("STORMARK-RESUMED", timeout=SUSPENDED_S + 30)
        deadline = time.monotonic() + 60
        while True:
            ok = self.run_stormark(["run", "--agent", self.address, "--target", "slow",
                                    "--rw", "read", "--size", "1M", "--no-db", "--no-progress"])
            if ok.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(2)
        self.assertEqual(ok.returncode, 0, ok.describe() + self.guest.console_text()[-3000:])



if __name__ == "__main__":
    h.main()
