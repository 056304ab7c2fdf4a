"""The kernel's AoE initiator against vblade: a qemu guest (vmlab.py) gets a second NIC, a tap in a
network namespace this test makes, on which vblade serves a backing file as AoE 1.0; the guest's
`aoe` driver finds it (/dev/etherd/e1.0) and its agent serves it as a `block:` target. qemu, vblade
and the controller all run in that namespace, so no frame leaves it.

- The row is detected as AoE on real sysfs (the kernel's etherd!e1.0, not a fake tree);
- the disk's own counters saw what the workload read and wrote (and verify's read-back of the
  region), within 2%;
- the phase verifies what it wrote, through the kernel's AoE, and vblade's backing file holds it;
- a pulled cable: the tap set down while the kernel's AoE I/O is in flight fails the phase at its
  deadline, naming the call stuck in the kernel, while the other host of the plan runs on; the
  cable back in, the agent takes phases again.
"""

import json
import os
import subprocess
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
WHY_NOT = vmlab.missing() or ("" if net.have("vblade") and net.have("ip")
                              else "needs vblade and iproute2 (scripts/install-deps.sh test)")

GUEST_BEFORE = """ip link set eth1 up
for i in $(seq 1 100); do
  [ -e /dev/etherd/e1.0 ] && break
  [ -e /dev/etherd/discover ] && echo > /dev/etherd/discover
  sleep 0.2
done
[ -e /dev/etherd/e1.0 ] || echo STORMARK-AOE-MISSING
"""


@unittest.skipIf(WHY_NOT, WHY_NOT)
class KernelAoeTest(h.StormarkTestCase):

    def boot(self, config_extra=""):
        """vblade on a tap in a fresh namespace, and a guest whose kernel AoE attaches it;
        returns (namespace, guest, vblade's backing file, vblade's process)."""
        ns = net.add_netns(self, f"stormark-aoe-{os.getpid() % 100000}")
        net.run("ip", "-n", ns, "tuntap", "add", "dev", "tapaoe", "mode", "tap")
        net.run("ip", "-n", ns, "link", "set", "tapaoe", "up")
        backing = net.make_backing_file(os.path.join(self.make_dir(), "aoe.img"), 64 * MIB)
        vblade = net.start_vblade(self, ns, "tapaoe", backing, 1, 0)
        config = config_extra + "targets:\n  kaoe: {block: /dev/etherd/e1.0, disposable: true}\n"
        guest = vmlab.Guest(self, "kaoe", vmlab.agent_script(h.bin_dir(), config,
                                                             before=GUEST_BEFORE),
                            extra_modules=("aoe",), netns=ns, taps=["tapaoe"]).start()
        guest.wait_for(r"listening on", timeout=240)
        self.assertNotIn("STORMARK-AOE-MISSING", guest.console_text())
        return ns, guest, backing, vblade

    def test_a_pulled_cable_under_kernel_aoe_io_fails_the_phase_in_its_bound(self):
        # The tap goes down while the guest's kernel AoE is reading and writing: its I/O waits
        # in the kernel (aoe retransmits for minutes before it gives up), so the 4 s phase fails
        # at its 8 s deadline naming the stuck call, and the other host, in the same plan, ends
        # its 4 s as usual.
        ns, guest, backing, vblade = self.boot("stuck_worker_after: 2s\n")
        other = net.start_agent_in_netns(self, "aoe-other", ns, "127.0.0.1:0",
                                         "targets:\n  scratch: {dir: %s}\n" % self.make_dir(),
                                         extra_args=["--insecure"])
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
hosts:
  - {{name: guest, address: "127.0.0.1:{guest.port(7420)}", target: kaoe}}
  - {{name: other, address: "{other.address}", target: scratch}}
phases:
  - {{name: cut, workload: randio, rw: randrw, bs: 64k, size: 16M, direct: true, runtime: 4s,
     time_based: true}}
""")
        json_path = os.path.join(self.make_dir(), "out.json")
        ctl = subprocess.Popen(net.in_netns(ns, [h.binary("stormark"), "run", "--plan", plan,
                                                 "--deadline", "8s", "--heartbeat-interval",
                                                 "500ms", "--json", json_path, "--no-db",
                                                 "--no-progress"]),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        self.addCleanup(h._stop_process, ctl)
        guest.wait_for(r"run phase", timeout=120)
        time.sleep(1)  # I/O in flight.
        net.run("ip", "-n", ns, "link", "set", "tapaoe", "down")
        started = time.monotonic()
        out, err = ctl.communicate(timeout=120)
        took = time.monotonic() - started
        print(out, file=sys.stderr)
        self.assertEqual(ctl.returncode, 1, out + err)
        # Bounded: the 8 s deadline from the start, the agent's 2 s to call the worker stuck.
        self.assertLess(took, 30, out)
        rows = {r["host"]: r for r in self.load_json(json_path)["phases"][0]["results"]}
        self.assertEqual(rows["guest"]["status"], "failed", rows["guest"])
        self.assertIn("phase deadline: ran ", rows["guest"]["error"])
        self.assertRegex(rows["guest"]["error"], r"worker stuck in the kernel in (pread64|"
                                                 r"pwrite64|read|write)[^;]* on /dev/etherd/e1\.0 "
                                                 r"for \d+ s")
        self.assertNotIn("no heartbeat", rows["guest"]["error"])  # The guest's agent answered.
        self.assertEqual(rows["other"]["status"], "succeeded", rows["other"])
        # The cable back in: the kernel's AoE resumes, the I/O returns, phases run again.
        net.run("ip", "-n", ns, "link", "set", "tapaoe", "up")
        # vblade, reading a raw socket on the tap, may have exited on the cable pull (ENETDOWN),
        # as a server does: it is started again, as its admin would.
        if vblade.poll() is not None:
            net.start_vblade(self, ns, "tapaoe", backing, 1, 0)
        deadline = time.monotonic() + 90
        while True:
            again = subprocess.run(net.in_netns(ns, [h.binary("stormark"), "run", "--agent",
                                                     f"127.0.0.1:{guest.port(7420)}", "--target",
                                                     "kaoe", "--rw", "read", "--size", "1M",
                                                     "--no-db", "--no-progress"]),
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=120)
            if again.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(2)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr +
                         guest.console_text()[-2000:])

    def test_the_kernels_aoe_initiator_reads_and_writes_vblade(self):
        ns, guest, backing, _ = self.boot()

        json_path = os.path.join(self.make_dir(), "out.json")
        argv = net.in_netns(ns, [h.binary("stormark"), "run", "--agent",
                                 f"127.0.0.1:{guest.port(7420)}", "--target", "kaoe",
                                 "--workload", "randio", "--set", "rw=randrw", "--set", "bs=64k",
                                 "--set", "size=16M", "--set", "direct=true",
                                 "--set", "verify=true", "--json", json_path, "--no-db",
                                 "--no-progress"])
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=600)
        print(done.stdout, file=sys.stderr)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr +
                         guest.console_text()[-2000:])
        with open(json_path) as f:
            row = json.load(f)["phases"][0]["results"][0]
        self.assertEqual(row["status"], "succeeded", row)
        env = row["environment"]["target"]
        self.assertEqual(env["transport"], "AoE", env)
        stats = row["device_stats"]
        self.assertEqual(stats["disk"], "etherd!e1.0", stats)
        read = sum(m["bytes"] for m in row["measurements"] if m["name"] == "read")
        written = sum(m["bytes"] for m in row["measurements"] if m["name"] == "write")
        self.assertGreater(read, 0)
        # After the timed region, verify reads the whole 16 MiB region back.
        expected = read + 16 * MIB
        self.assertLessEqual(abs(int(stats["disk.read_bytes"]) - expected), 0.02 * expected,
                             stats)
        self.assertLessEqual(abs(int(stats["disk.written_bytes"]) - written), 0.02 * written,
                             stats)
        self.assertEqual(row["verify"]["mismatches"] if "mismatches" in row.get("verify", {})
                         else 0, 0, row.get("verify"))
        # What the guest wrote through its kernel reached vblade's file.
        with open(backing, "rb") as f:
            self.assertNotEqual(f.read(16 * MIB).count(0), 16 * MIB, "nothing reached vblade")


if __name__ == "__main__":
    h.main()
