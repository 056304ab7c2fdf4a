"""The disk's own counters against what a phase says it read, end to end, on a loop device this
test attaches (root, losetup): every phase on a block target reports what reached its disk
(/sys/class/block/NAME/stat), and a phase whose reads did not reach it carries the cache note.

- direct random reads: the disk read what the workload read (within 2%), and no note;
- direct sequential writes at depth 8: one request per I/O reaches the disk by default, as
  fio's, and fewer, merged, when the queue submits in batches;
- six writing phases back to back, io_uring and libaio in turn: each opens the device again;
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

    def test_queue_hands_the_disk_one_request_per_io_as_fio(self):
        # Sequential 64 KiB direct writes, 8 in flight. By default each request goes to the
        # kernel in its own call, as fio's iodepth_batch_submit=1: none merges, so the disk
        # counts one write per I/O. Submitted 8 at a time, the block layer merges neighbours
        # into larger writes, which fio does only when asked (iodepth_batch_submit=8 and
        # iodepth_batch_complete_max=8).
        rows = {}
        for label, extra in (("default", ()), ("batched", ("iodepth_batch_submit=8", "iodepth_batch_complete_max=8"))):
            for engine in ("io_uring", "libaio"):
                result, row, read, disk = self.randio(
                    "write", "direct=true", "bs=64k", "iodepth=8", f"engine={engine}", *extra)
                ops = sum(m["ops"] for m in row["measurements"] if m["name"] == "write")
                self.assertEqual(ops, 32 * MIB // (64 << 10), row["measurements"])
                rows[label, engine] = (ops, int(row["device_stats"]["disk.writes"]))
        print(rows, file=sys.stderr)
        for engine in ("io_uring", "libaio"):
            ops, writes = rows["default", engine]
            self.assertLessEqual(abs(writes - ops), 0.02 * ops, f"{engine}: {rows}")
            ops, writes = rows["batched", engine]
            self.assertLess(writes, 0.9 * ops, f"{engine}, batched: {rows}")

    def test_phases_back_to_back_open_the_device_each_time(self):
        # Each phase that writes a block target opens it exclusively (O_EXCL). An io_uring
        # ring is torn down by the kernel after the phase has closed it, and with its registered
        # file the device stayed claimed for a moment: the next phase's open failed with
        # "in use ... by another program" in 2 of 4 runs of the test above. Six phases in a row,
        # each right after the other, alternating the engines.
        plan = os.path.join(self.make_dir(), "plan.yaml")
        with open(plan, "w") as f:
            f.write("repeat: 3\nphases:\n")
            for engine in ("io_uring", "libaio"):
                f.write(f"  - {{name: {engine.replace('_', '')}, workload: randio, rw: randwrite, "
                        f"size: 4M, direct: true, iodepth: 8, engine: {engine}}}\n")
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(
            ["run", "--plan", plan, "--agent", self.agent.address, "--target", "loop", "--json",
             json_path,
             "--no-db", "--no-progress"], timeout=180)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        phases = self.load_json(json_path)["phases"]
        self.assertEqual(len(phases), 6)
        for phase in phases:
            self.assertEqual(phase["results"][0]["status"], "succeeded", phase["results"][0])

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
