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
  cable back in, the agent takes phases again;
- kernel against user-space, on one export in one plan: the tap and one end of a veth pair are
  ports of a bridge in the namespace, vblade serves on the bridge, and an agent on the host side
  (in the namespace too) reaches the same export as an `aoe:` target through its own initiator
  on the veth's other end; the plan is sequential, so that each row has vblade and the cores to
  itself. The guest's row is the kernel's AoE on real sysfs, the host's the user-space
  initiator's, each found vblade's size by itself, the guest's disk counters saw what it read
  (within 2%), and only the guest's row says its CPU is emulated.
"""

import json
import os
import re
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

# The bridged set-up's devices, all in the test's namespace (boot(bridged=True)).
BRIDGE, BRIDGE_MAC = "braoe", "02:53:4d:41:4f:45"
BRIDGE_PORT, USER_IF = "vaoebr", "vaoeuser"


@unittest.skipIf(WHY_NOT, WHY_NOT)
class KernelAoeTest(h.StormarkTestCase):

    def boot(self, config_extra="", bridged=False):
        """vblade on a tap in a fresh namespace, and a guest whose kernel AoE attaches it;
        returns (namespace, guest, vblade's backing file, vblade's process). With `bridged`,
        the tap is a port of the bridge BRIDGE, vblade serves on the bridge, and the veth pair
        (BRIDGE_PORT, USER_IF) is made with BRIDGE_PORT a port too: AoE frames sent on USER_IF
        reach the same vblade as the guest's."""
        ns = net.add_netns(self, f"stormark-aoe-{os.getpid() % 100000}")
        net.run("ip", "-n", ns, "tuntap", "add", "dev", "tapaoe", "mode", "tap")
        serve_on = "tapaoe"
        if bridged:
            # vblade reads its interface's MAC address once, when it starts, and a bridge
            # without an address of its own takes its lowest port's, anew as ports come and
            # go: this one has its own (locally administered).
            net.run("ip", "-n", ns, "link", "add", BRIDGE, "address", BRIDGE_MAC, "type",
                    "bridge")
            net.Veth(self, BRIDGE_PORT, USER_IF, ns, host_netns=ns).up()
            for port in ("tapaoe", BRIDGE_PORT):
                net.run("ip", "-n", ns, "link", "set", port, "master", BRIDGE)
            net.run("ip", "-n", ns, "link", "set", BRIDGE, "up")
            serve_on = BRIDGE
        net.run("ip", "-n", ns, "link", "set", "tapaoe", "up")
        backing = net.make_backing_file(os.path.join(self.make_dir(), "aoe.img"), 64 * MIB)
        vblade = net.start_vblade(self, ns, serve_on, backing, 1, 0)
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

    def test_kernel_and_user_space_aoe_side_by_side(self):
        # Sequential, as in vm.kernel_nbd and vm.kernel_iscsi: each initiator has vblade (one
        # process, 16 buffers) to itself while its row runs, and on 2 cores the host's agent
        # does not compete for CPU with qemu's emulated one. Run concurrently, each row would
        # measure the other's load on vblade and on the cores as well as its own initiator.
        ns, guest, _, _ = self.boot(bridged=True)
        host_agent = net.start_agent_in_netns(
            self, "uaoe", ns, "127.0.0.1:0",
            f"targets:\n  uaoe: {{aoe: 'aoe://{USER_IF}/1.0', disposable: true}}\n",
            extra_args=["--insecure"])

        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""mode: sequential
hosts:
  - {{name: kernel, address: "127.0.0.1:{guest.port(7420)}", target: kaoe}}
  - {{name: user-space, address: "{host_agent.address}", target: uaoe}}
phases:
  - {{name: r, workload: randio, rw: randread, bs: 4k, size: 64M, direct: true,
      time_based: true, runtime: 3s, iodepth: 4, engine: libaio}}
""")
        json_path = os.path.join(work, "out.json")
        done = subprocess.run(net.in_netns(ns, [h.binary("stormark"), "run", "--plan", plan,
                                                "--json", json_path, "--no-db",
                                                "--no-progress"]),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=600)
        result = h.Result(done.args, done.returncode, done.stdout, done.stderr)
        if os.environ.get("STORMARK_SHOW_OUTPUT"):
            print(result.stdout, file=sys.stderr)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0,
                         result.describe() + guest.console_text()[-2000:] + host_agent.log())
        report = self.load_json(json_path)
        rows = {r["host"]: r for r in report["phases"][0]["results"]}
        kernel, user = rows["kernel"], rows["user-space"]
        for row in (kernel, user):
            self.assertEqual(row["status"], "succeeded", row)
        k_env, u_env = kernel["environment"]["target"], user["environment"]["target"]
        self.assertEqual(k_env["transport"], "AoE", k_env)
        self.assertEqual(k_env["transport_detail"], "etherd e1.0 via eth1", k_env)
        self.assertEqual(u_env["transport"], "AoE", u_env)
        self.assertRegex(u_env["transport_detail"],
                         rf"^user-space AoE initiator on {USER_IF}, shelf 1 slot 0, firmware "
                         r"0x[0-9a-f]{4}, 16 buffers, 2 sectors/frame$", u_env)
        self.assertEqual(user["resolved"]["engine"], "aoe", user["resolved"])
        # The same vblade answered both: the kernel's driver shows its firmware in sysfs
        # (firmware-version), the agent's initiator from its own Config query.
        firmware = re.search(r"firmware (0x[0-9a-f]{4})", u_env["transport_detail"]).group(1)
        self.assertEqual(k_env.get("model"), f"AoE target, firmware {firmware}", k_env)
        # One export: each initiator found vblade's 64 MiB by itself (the kernel's driver and
        # the agent's initiator each ask vblade's ATA IDENTIFY).
        sizes = {a["host"]: {t["name"]: t["size_bytes"] for t in a["targets"]}
                 for a in report["agents"]}
        self.assertEqual(sizes["kernel"]["kaoe"], 64 * MIB, sizes)
        self.assertEqual(sizes["user-space"]["uaoe"], 64 * MIB, sizes)
        table = [t for t in h.phase_tables(result.stdout) if " r:" in t["title"]][0]
        for host in ("kernel", "user-space"):
            via = [w for w in h.rows_for(table, host)[0].split() if w != "!"][1]
            self.assertEqual(via, "AoE", table)

        # The kernel's disk counted what the guest's workload read; the user-space
        # initiator's own counters saw its frames answered, none timed out.
        stats = kernel["device_stats"]
        self.assertEqual(stats["disk"], "etherd!e1.0", stats)
        read = sum(m["bytes"] for m in kernel["measurements"] if m["name"] == "read")
        self.assertGreater(read, 0)
        self.assertLessEqual(abs(int(stats["disk.read_bytes"]) - read), 0.02 * read, stats)
        u_stats = user["device_stats"]
        self.assertGreater(int(u_stats["aoe.frames"]), 0, u_stats)
        self.assertEqual(u_stats["aoe.timeouts"], "0", u_stats)

        self.assertTrue([w for w in kernel["warnings"] if "emulated" in w], kernel["warnings"])
        self.assertFalse([w for w in user["warnings"] if "emulated" in w], user["warnings"])

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
