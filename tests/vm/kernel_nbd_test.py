"""Kernel NBD against the agent's user-space NBD client, on one nbdkit, in one run: a qemu guest
(vmlab.py) attaches nbdkit's export (on the host's loopback, reached through qemu's user-mode
network) with the kernel's nbd driver and Debian's nbd-client, and its agent serves /dev/nbd0 as a
`block:` target; an agent on the host serves the same export as an `nbd://` target through its
own client. One plan runs the same direct random reads on both, one host after the other.

- The guest's row is detected as NBD on real sysfs (the kernel's nbd0, not a fake tree), and its
  disk's own counters saw what the workload read (within 2%).
- The host's row is NBD too, with the user-space client named in its transport detail.
- The guest's CPU is emulated, and its row says its figures measure the emulator.
- A second export, attached as /dev/nbd1 with ext4 made on it in the guest and mounted, is a
  `dir:` target: a stream phase writes and reads a file on it, its row is NBD with ext4 on
  /dev/nbd1, and nbd1's own counters saw the direct writes and reads (and little else).
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402
import vmlab  # noqa: E402

MIB = 1 << 20
WHY_NOT = vmlab.missing() or ("" if net.have("nbdkit") and os.path.exists("/usr/sbin/nbd-client")
                              else "needs nbdkit and nbd-client (scripts/install-deps.sh test)")


@unittest.skipIf(WHY_NOT, WHY_NOT)
class KernelNbdTest(h.StormarkTestCase):

    def test_kernel_and_user_space_nbd_side_by_side(self):
        _, port = net.start_nbdkit(self, "memory", "128M")
        _, fs_port = net.start_nbdkit(self, "memory", "128M")
        # 10.0.2.2 is the host's loopback as qemu's user-mode network shows it to the guest.
        before = (f"chroot /host /usr/sbin/nbd-client 10.0.2.2 {port} /dev/nbd0 -N '' -b 4096 || "
                  f"echo STORMARK-NBD-CLIENT-FAILED\n"
                  f"chroot /host /usr/sbin/nbd-client 10.0.2.2 {fs_port} /dev/nbd1 -N '' -b 4096 "
                  f"|| echo STORMARK-NBD-CLIENT-FAILED\n"
                  + vmlab.ext4_script("/dev/nbd1", "/tmp/nbdfs"))
        config = ("targets:\n  knbd: {block: /dev/nbd0, disposable: true}\n"
                  "  knbdfs: {dir: /tmp/nbdfs}\n")
        guest = vmlab.Guest(self, "knbd", vmlab.agent_script(h.bin_dir(), config, before=before),
                            extra_modules=("nbd",)).start()
        host_agent = self.start_agent("unbd", extra_targets=(
            f"  unbd: {{nbd: 'nbd://127.0.0.1:{port}/', disposable: true}}\n"))
        guest.wait_for(r"listening on", timeout=240)
        self.assertNotIn("STORMARK-NBD-CLIENT-FAILED", guest.console_text())
        self.assertNotIn("STORMARK-FS-FAILED", guest.console_text())

        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""mode: sequential
hosts:
  - {{name: kernel, address: "127.0.0.1:{guest.port(7420)}", target: knbd}}
  - {{name: user-space, address: "{host_agent.address}", target: unbd}}
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
        self.assertEqual(k_env["transport"], "NBD", k_env)
        self.assertNotIn("user-space", k_env.get("transport_detail", ""), k_env)
        self.assertEqual(u_env["transport"], "NBD", u_env)
        self.assertIn("user-space NBD client", u_env["transport_detail"], u_env)

        stats = kernel["device_stats"]
        self.assertEqual(stats["disk"], "nbd0", stats)
        read = sum(m["bytes"] for m in kernel["measurements"] if m["name"] == "read")
        self.assertGreater(read, 0)
        self.assertLessEqual(abs(int(stats["disk.read_bytes"]) - read), 0.02 * read, stats)

        self.assertTrue([w for w in kernel["warnings"] if "emulated" in w], kernel["warnings"])
        self.assertFalse([w for w in user["warnings"] if "emulated" in w], user["warnings"])

        # The filesystem on the kernel's second NBD device, as a dir: target.
        print(vmlab.check_stream_on_filesystem(self, guest, "knbdfs", "/dev/nbd1", "NBD"),
              file=sys.stderr)

if __name__ == "__main__":
    h.main()
