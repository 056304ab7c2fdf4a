"""The default plan reads back the file its write phase wrote, on a real filesystem.

ext4 on a loop device this test attaches (root: the harness's start_loop_agent), with the agent's
dir: target on it. The loop device's own counters (/sys/block/loopN/stat) say what reached the
disk: the write-then-read plan writes its size once, not twice, and its read comes from the
disk, not from the page cache. Everything made here is removed in cleanup, also when a test
fails."""

import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


@unittest.skipUnless(os.geteuid() == 0, "needs root (losetup, mount)")
@unittest.skipUnless(net.have("losetup") and net.have("mkfs.ext4"), "needs losetup, mkfs.ext4")
class ReadBackOnAFilesystemTest(h.StormarkTestCase):

    def setUp(self):
        self.loop = h.start_loop_agent(self, "readback", size=256 * MIB)

    def sectors(self):
        """(read, written) 512-byte sectors of the loop device so far."""
        subprocess.run(["sync"], check=True)
        with open(f"/sys/block/{os.path.basename(self.loop.device)}/stat") as f:
            fields = f.read().split()
        return int(fields[2]), int(fields[6])

    def left_in_target(self):
        """What is in the target directory besides the filesystem's own lost+found."""
        return [e for e in os.listdir(self.loop.mount_point) if e != "lost+found"]

    def run_plan(self, *flags):
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(["run", "--agent", self.loop.agent.address, "--json",
                                    json_path, "--no-progress", "--no-db"] + list(flags),
                                   timeout=240)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        return result, self.load_json(json_path)["phases"]

    def test_the_default_plan_writes_its_size_once_and_reads_it_from_the_disk(self):
        read_before, written_before = self.sectors()
        result, phases = self.run_plan("--size", "64M")
        read_after, written_after = self.sectors()
        self.assertEqual([p["name"] for p in phases], ["seq-write", "seq-read"])
        written = (written_after - written_before) * 512
        # 64 MiB of data and ext4's journal and metadata; a second file would make it 128.
        self.assertGreaterEqual(written, 64 * MIB)
        self.assertLess(written, 80 * MIB, f"{written / MIB:.1f} MiB reached the disk")
        # The read was evicted first, so its 64 MiB came from the disk.
        self.assertGreaterEqual((read_after - read_before) * 512, 64 * MIB)
        self.assertEqual(len(phases[1]["results"]), 1)
        row = phases[1]["results"][0]
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["bytes"], 64 * MIB)
        self.assertEqual(row["resolved"]["data"],
                         f"the file phase '{phases[0]['phase_id']}' (stream write) wrote just "
                         "before, flushed and evicted from the cache")
        # Evicted: nothing says the read may have come from the cache (a 64 MiB read from this
        # host-cached virtual disk can still be too fast to time).
        self.assertEqual([w for w in row["warnings"] if "cache" in w or "layout" in w], [])
        self.assertEqual(self.left_in_target(), [], "the kept file was not removed")

    def test_a_read_larger_than_the_write_lays_out_its_own_and_leaves_nothing(self):
        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""
hosts:
  - {{name: fshost, address: "{self.loop.agent.address}", target: scratch}}
phases:
  - {{name: w, workload: stream, rw: write, size: 16M, fdatasync: true}}
  - {{name: r, workload: stream, rw: read, size: 32M}}
""")
        json_path = os.path.join(work, "out.json")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--no-progress",
                                    "--no-db"], timeout=240)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        row = self.result_for(self.load_json(json_path)["phases"][1], "fshost")
        self.assertNotIn("data", row["resolved"])
        self.assertEqual(self.left_in_target(), [])


if __name__ == "__main__":
    h.main()
