"""randio end to end: a real agent with a block file target, the null target and a dir target,
driven by a real controller; the figures in the JSON report add up, verification passes, and
writing is refused where the config does not allow it."""

import json
import os
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


class RandioTest(h.StormarkTestCase):

    def setUp(self):
        self.agent = self.start_agent("randio", extra_targets=(
            "  img: {block: $BASE/disk.img, size: 32M, disposable: true}\n"
            "  ro: {block: $BASE/ro.img, size: 8M}\n"
            "  holes: {block: $BASE/holes.img, size: 8M, disposable: true}\n"
            "  holes_ro: {block: $BASE/holes-ro.img, size: 8M}\n"
            "  sink: {null: true}\n"))
        self.base = os.path.dirname(self.agent.target_dir)
        self.json_path = os.path.join(self.make_dir(), "out.json")

    def run_randio(self, target, *sets, expect=0):
        args = ["run", "--agent", self.agent.address, "--target", target, "--workload", "randio",
                "--json", self.json_path, "--no-progress"]
        for s in sets:
            args += ["--set", s]
        result = self.run_stormark(args)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        with open(self.json_path) as f:
            report = json.load(f)
        return result, report["phases"][0]["results"][0]

    def test_verified_random_writes_on_a_block_file(self):
        result, row = self.run_randio("img", "rw=randwrite", "engine=io_uring", "iodepth=8",
                                      "direct=true", "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        writes = [m for m in row["measurements"] if m["name"] == "write"]
        self.assertEqual(len(writes), 1, row["measurements"])
        self.assertEqual(writes[0]["ops"], 32 * MIB // 4096)
        self.assertEqual(row["bytes"], 32 * MIB)
        self.assertEqual(row["verify"]["mismatches"], 0)
        self.assertEqual(row["verify"]["units_checked"], 32 * MIB // 4096)
        self.assertEqual(row["resolved"]["iodepth"], "8")
        self.assertEqual(row["resolved"]["engine"], "io_uring")
        self.assertIn("write", result.stdout)
        self.assertIn("p99.99", result.stdout)
        self.assertIn("verify local", result.stdout.replace(self.agent.address, "local"))
        # The block target is used in place: the file stays, at its size.
        self.assertEqual(os.path.getsize(os.path.join(self.base, "disk.img")), 32 * MIB)

    def test_null_target_measures_the_engine_alone(self):
        _, row = self.run_randio("sink", "rw=randread", "runtime=1s", "time_based=true",
                                 "numjobs=2")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["resolved"]["engine"], "null")
        self.assertGreater(row["ops"], 20000)  # Far above any disk: only our own cost.
        self.assertAlmostEqual(row["elapsed_seconds"], 1.0, delta=0.3)
        self.assertIn("stonewall", row)
        self.assertTrue(any("null target" in w for w in row["warnings"]), row["warnings"])

    def test_target_not_marked_disposable_is_only_read(self):
        result, row = self.run_randio("ro", "rw=randwrite", expect=1)
        self.assertEqual(row["status"], "error", row)
        self.assertIn("is not marked 'disposable: true'", result.stdout + result.stderr)
        _, row = self.run_randio("ro", "rw=randread", "size=4M")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["bytes"], 4 * MIB)

    def sparse_file(self, name):
        """An 8 MiB sparse file whose first MiB holds 0xab; returns its path."""
        path = os.path.join(self.base, name)
        with open(path, "wb") as f:
            f.write(b"\xab" * MIB)
            f.truncate(8 * MIB)
            os.fsync(f.fileno())
        return path

    @staticmethod
    def holes(path):
        """The (begin, end) ranges of `path` that hold no data."""
        ranges, at = [], 0
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            while at < size:
                try:
                    data = os.lseek(f.fileno(), at, os.SEEK_DATA)
                except OSError:
                    data = size
                if data > at:
                    ranges.append((at, data))
                if data >= size:
                    break
                at = os.lseek(f.fileno(), data, os.SEEK_HOLE)
        return ranges

    def test_reads_of_a_sparse_block_file_are_flagged_and_nothing_is_written(self):
        # A hole reads as zeros without touching the disk: such figures are the kernel's.
        for target, name in (("holes", "holes.img"), ("holes_ro", "holes-ro.img")):
            path = self.sparse_file(name)
            _, row = self.run_randio(target, "rw=randread", "direct=true", "size=8M")
            self.assertEqual(row["status"], "succeeded", row)
            self.assertTrue(any(w.startswith(f"target '{target}': 7 MiB of the 8 MiB this phase "
                                             "reads hold no data") for w in row["warnings"]),
                            row["warnings"])
            self.assertEqual(self.holes(path), [(MIB, 8 * MIB)], "a read phase writes nothing")

    def test_dir_target_file_is_removed_after_the_phase(self):
        _, row = self.run_randio("scratch", "rw=randrw", "size=16M", "bs=4k-64k")
        self.assertEqual(row["status"], "succeeded", row)
        # A random job of several sizes ends once it has moved its size, its last I/O whole
        # (fio's rule): up to one 64 KiB block more.
        self.assertGreaterEqual(row["bytes"], 16 * MIB)
        self.assertLess(row["bytes"], 16 * MIB + 64 * 1024)
        names = {m["name"] for m in row["measurements"]}
        self.assertEqual(names, {"read", "write"})
        self.assertEqual(os.listdir(self.agent.target_dir), [])

    def test_bonnie_refuses_a_block_target(self):
        # stream runs on block targets too (stream_block_test.py); bonnie needs a directory.
        result = self.run_stormark(["run", "--agent", self.agent.address, "--target", "img",
                                    "--workload", "bonnie", "--no-progress"])
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertIn("bonnie runs on a dir target", result.stdout + result.stderr)


if __name__ == "__main__":
    h.main()
