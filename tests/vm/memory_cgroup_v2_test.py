"""Memory-limited phases under cgroup v2, on a real kernel: a qemu guest (vmlab.py) of 512 MiB
boots Debian's kernel, mounts cgroup v2 and runs the build tree's agent in a cgroup of its own,
`agent.service`, as systemd would with Delegate=memory; ext4 on the guest's virtio disk is the
agent's target. The development machines keep the memory controller in cgroup v1, so this is
where the v2 path (memory.max, the move into the `stormark-agent` leaf) runs for real.

- Without a limit, 4 s of random 64 KiB reads of a 128 MiB file read each block from the disk
  once at most (the disk's own counters see at most the file), and the rest from the guest's
  page cache. (Under TCG the guest reads too slowly for the cache note's tenth.)
- With `memory_limit: 32M` the file does not fit: most reads reach vda. The phase ran in
  agent.service/stormark-phase-PID-ID (memory.max), and a second limited phase works the same way
  from the agent's leaf, beside it, not below it.

The guest's figures are emulated (TCG) and mean nothing; only what reached the disk is compared.
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import stormark_harness as h  # noqa: E402
import vmlab  # noqa: E402

MIB = 1 << 20
CACHE_NOTE = "the reads came from the page cache"

WHY_NOT = vmlab.missing()


@unittest.skipIf(WHY_NOT, WHY_NOT)
class MemoryCgroupV2Test(h.StormarkTestCase):

    def setUp(self):
        disk = os.path.join(self.make_dir("stormark-vm-disk-"), "vda.img")
        with open(disk, "wb") as f:
            f.truncate(512 * MIB)
        before = "\n".join([
            "chroot /host /sbin/mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "
            "/dev/vda",
            "mount /dev/vda /host/mnt",
            "mkdir -p /host/mnt/target"])
        config = "targets:\n  scratch:\n    dir: /mnt/target\n    device: /dev/vda\n"
        script = vmlab.agent_script(h.bin_dir(), config, before=before, cgroup="agent.service")
        self.guest = vmlab.Guest(self, "memcg-v2", script, memory_mib=512,
                                 disks=[vmlab.Disk(disk, "virtio")]).start()
        self.guest.wait_for(r"listening on", timeout=240)
        self.address = f"127.0.0.1:{self.guest.port(7420)}"

    def random_reads(self, name, limit_line):
        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""{limit_line}
phases:
  - {{name: {name}, workload: randio, rw: randread, size: 128M, bs: 64k, time_based: true,
      runtime: 4s}}
""")
        json_path = os.path.join(work, "out.json")
        result = self.run_stormark(["run", "--agent", self.address, "--target", "scratch",
                                    "--plan", plan, "--json", json_path, "--no-db",
                                    "--no-progress"], timeout=600)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe() + self.guest.console_text()[-2000:])
        row = self.load_json(json_path)["phases"][0]["results"][0]
        self.assertEqual(row["status"], "succeeded", row)
        stats = row["device_stats"]
        self.assertEqual(stats["disk"], "vda", stats)
        read = sum(m["bytes"] for m in row["measurements"] if m["name"] == "read")
        disk = int(stats["disk.read_bytes"])
        print(f"{name}: {read >> 20} MiB read, {disk >> 20} MiB from vda", file=sys.stderr)
        return result, row, read, disk

    def test_a_v2_limit_sends_the_reads_to_the_disk(self):
        result, row, read, disk = self.random_reads("unlimited", "")
        self.assertLessEqual(disk, 1.05 * 128 * MIB, row["device_stats"])
        self.assertGreaterEqual(read, 1.3 * disk, (read, disk))

        for name in ("limited", "again"):
            result, row, read, disk = self.random_reads(name, "memory_limit: 32M")
            self.assertGreaterEqual(disk, 0.6 * read, row["device_stats"])
            self.assertFalse([w for w in row["warnings"] if CACHE_NOTE in w], row["warnings"])
            env = row["environment"]["host"]
            self.assertEqual(env["memory_limit_bytes"], str(32 * MIB), env)
            self.assertTrue(
                env["memory_cgroup"].startswith("v2 /sys/fs/cgroup/agent.service/stormark-phase-"),
                env)
            self.assertIn("memory limit: 32 MiB (cgroup v2), the page cache held to it",
                          result.stdout)


if __name__ == "__main__":
    h.main()
