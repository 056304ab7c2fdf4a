"""The interlocks in front of writes to raw block devices, on loop devices this test creates.

Every device here is a loop device attached by this test to a file it made; each is detached
(and anything mounted from it unmounted) in teardown, also when a test fails. No other device
is ever named in an agent config. Needs root and losetup; skipped without them."""

import os
import re
import shutil
import struct
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


def have(tool):
    return shutil.which(tool) is not None


def run(*argv):
    return subprocess.run(list(argv), check=True, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL).stdout.strip()


@unittest.skipUnless(os.geteuid() == 0 and have("losetup"), "needs root and losetup")
class BlockSafetyTest(h.StormarkTestCase):

    def loop_device(self, size=64 * MIB, partition=False):
        """A loop device on a new file of `size` bytes; with `partition`, the file holds an MBR
        with one partition (from 1 MiB to the end) and the device is scanned for it."""
        path = os.path.join(self.make_dir("stormark-loop-"), "backing.img")
        with open(path, "wb") as f:
            f.truncate(size)
            if partition:
                entry = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048,
                                    size // 512 - 2048)
                f.seek(446)
                f.write(entry)
                f.seek(510)
                f.write(b"\x55\xaa")
        args = ["losetup", "-f", "--show"] + (["-P"] if partition else []) + [path]
        device = run(*args)
        self.assertTrue(device.startswith("/dev/loop"), device)
        self.addCleanup(subprocess.run, ["losetup", "-d", device], capture_output=True)
        return device

    def mount(self, device):
        point = self.make_dir("stormark-mnt-")
        run("mount", device, point)
        self.addCleanup(subprocess.run, ["umount", "-l", point], capture_output=True)
        return point

    def randio(self, device, rw, disposable=True, expect=0):
        agent = self.start_agent("safety", extra_targets=(
            f"  loop: {{block: {device}, disposable: {'true' if disposable else 'false'}}}\n"))
        result = self.run_stormark(["run", "--agent", agent.address, "--target", "loop",
                                    "--workload", "randio", "--set", f"rw={rw}",
                                    "--set", "size=4M", "--no-progress"])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        return result.stdout + result.stderr

    def test_empty_disposable_device_is_written(self):
        device = self.loop_device()
        self.randio(device, "randwrite")

    def test_device_not_marked_disposable_is_refused(self):
        device = self.loop_device()
        out = self.randio(device, "randwrite", disposable=False, expect=1)
        self.assertIn(f"target 'loop' ({device}) is not marked 'disposable: true'", out)
        self.randio(device, "randread", disposable=False)

    @unittest.skipUnless(have("mkfs.ext4"), "needs mkfs.ext4")
    def test_filesystem_signature_is_refused_but_reads_are_allowed(self):
        device = self.loop_device()
        run("mkfs.ext4", "-q", "-F", device)
        out = self.randio(device, "randwrite", expect=1)
        self.assertIn(f"({device}) holds data: ext4 filesystem", out)
        self.assertIn(f"wipefs -a {device}", out)
        out = self.randio(device, "randread")
        # The image behind the device is sparse: the read is flagged, never refused.
        self.assertRegex(out, r"target 'loop': [\d.]+ MiB of the 4 MiB this phase reads hold no "
                              r"data in %s \(on /" % re.escape(device))

    @unittest.skipUnless(have("mkfs.ext4"), "needs mkfs.ext4")
    def test_mounted_device_is_refused(self):
        device = self.loop_device()
        run("mkfs.ext4", "-q", "-F", device)
        point = self.mount(device)
        out = self.randio(device, "randwrite", expect=1)
        self.assertIn(f"{device} is mounted at {point}", out)
        self.randio(device, "randread")

    @unittest.skipUnless(have("mkfs.ext4"), "needs mkfs.ext4")
    def test_mounted_partition_protects_the_whole_device(self):
        device = self.loop_device(partition=True)
        part = device + "p1"
        if not os.path.exists(part):
            h.skip_for_host(self, "the kernel did not scan the loop device's partition table")
        run("mkfs.ext4", "-q", "-F", part)
        point = self.mount(part)
        out = self.randio(device, "randwrite", expect=1)
        self.assertIn(f"{part} is mounted at {point}", out)

    def test_partition_table_is_refused(self):
        device = self.loop_device(partition=True)
        out = self.randio(device, "randwrite", expect=1)
        self.assertIn("MBR partition table", out)

    @unittest.skipUnless(have("mkswap"), "needs mkswap")
    def test_swap_signature_is_refused(self):
        device = self.loop_device()
        run("mkswap", device)
        out = self.randio(device, "randwrite", expect=1)
        self.assertIn("swap space", out)


if __name__ == "__main__":
    h.main()
