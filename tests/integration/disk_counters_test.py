"""The disk's own counters against what a phase says it read, end to end, on a loop device this
test attaches (root, losetup): every phase on a block target reports what reached its disk
(/sys/class/block/NAME/stat), and a phase whose reads did not reach it carries the cache note.

- direct random reads: the disk read what the workload read (within 2%), and no note;
- stream's direct sequential write and read of 64 MiB: the disk wrote and read what stream says
  it wrote and read (within 2%), and no note;
- buffered random reads of a 32 MiB region for 2 s: the first pass comes from the disk, the rest
  from the page cache; the disk read about the region, the workload many times more, and the row
  says its reads came from the page cache, with both figures."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

MIB = 1 << 20
NOTE = "the reads came from the page cache"


@unittest.skipUnless(os.geteuid() == 0, "needs root (losetup)")
@unittest.skipUnless(net.have("losetup"), "needs losetup")
class DiskCountersTest(h.StormarkTestCase):

    def setUp(self):
        work = self.make_dir("stormark-disk-counters-")
        backing = os.path.join(work, "disk.img")
        with open(backing, "wb") as f:
            f.truncate(128 * MIB)
        self.device = net.run("losetup", "-f", "--show", backing).stdout.strip()
        self.addCleanup(net.run, "losetup", "-d", self.device, check=False)
        self.agent = self.start_agent("disk-counters", extra_targets=(
            f"  loop: {{block: {self.device}, disposable: true}}\n"))
        # Data to read: one direct write over the region.
        self.randio("write", "direct=true")

    def randio(self, rw, *sets):
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(
            ["run", "--agent", self.agent.address, "--target", "loop", "--workload", "randio",
             "--set", f"rw={rw}", "--set", "size=32M", "--json", json_path, "--no-db",
             "--no-progress"] + [x for s in sets for x in ("--set", s)],
            timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        row = self.load_json(json_path)["phases"][0]["results"][0]
        self.assertEqual(row["status"], "succeeded", row)
        stats = row["device_stats"]
        self.assertEqual(stats["disk"], os.path.basename(self.device), stats)
        read = sum(m["bytes"] for m in row["measurements"] if m["name"] == "read")
        return result, row, read, int(stats["disk.read_bytes"])

    def test_direct_reads_reached_the_disk(self):
        result, row, read, disk = self.randio("randread", "direct=true", "time_based=true",
                                              "runtime=1s", "engine=io_uring", "iodepth=8")
        self.assertGreater(read, 0)
        self.assertLessEqual(abs(disk - read), 0.02 * read,
                             f"the workload read {read}, the disk {disk}")
        self.assertFalse([w for w in row["warnings"] if NOTE in w], row["warnings"])

    def stream(self, rw, *sets):
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(
            ["run", "--agent", self.agent.address, "--target", "loop", "--workload", "stream",
             "--set", f"rw={rw}", "--set", "size=64M", "--set", "direct=true", "--json",
             json_path, "--no-db", "--no-progress"] + [x for s in sets for x in ("--set", s)],
            timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        row = self.load_json(json_path)["phases"][0]["results"][0]
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["device_stats"]["disk"], os.path.basename(self.device),
                         row["device_stats"])
        return row

    def test_stream_writes_and_reads_reached_the_disk(self):
        for rw, counter in (("write", "disk.written_bytes"), ("read", "disk.read_bytes")):
            row = self.stream(rw)
            moved = row["bytes"]
            disk = int(row["device_stats"][counter])
            self.assertEqual(moved, 64 * MIB, row)
            self.assertLessEqual(abs(disk - moved), 0.02 * moved,
                                 f"stream {rw}: it moved {moved} bytes, the disk {disk}")
            self.assertFalse([w for w in row["warnings"] if NOTE in w], row["warnings"])

    def test_reads_from_the_page_cache_say_so(self):
        result, row, read, disk = self.randio("randread", "time_based=true", "runtime=2s")
        # The 32 MiB region once from the disk (with read-ahead), then from the page cache.
        self.assertLess(disk, 48 * MIB, row["device_stats"])
        self.assertGreater(read, 10 * disk, (read, disk))
        notes = [w for w in row["warnings"] if NOTE in w]
        self.assertEqual(len(notes), 1, row["warnings"])
        print(notes[0], file=sys.stderr)
        self.assertIn(f"reached {os.path.basename(self.device)}", notes[0])
        self.assertIn(NOTE, result.stdout)  # The table's notes show it too.


if __name__ == "__main__":
    h.main()
