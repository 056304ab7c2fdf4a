"""Attacks on a dir: target, with a real agent: its phase directory or the target itself
swapped for a symbolic link before Prepare, during the lay-out, between Prepare and Run and
during Run.

Every attack has a victim outside the target: a directory of files whose checksums must not
change and, as root, an ext4 loop device this test creates, not marked disposable, which must
still pass `e2fsck -fn` with its bytes unchanged. Each phase must fail with one clear line or
be unaffected, and the agent must still serve a clean phase afterwards. The swapping is done
by a thread of this test that watches the target for the phase's directory.

Loop devices are made by this test on files it made, and detached in teardown."""

import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


def digest_tree(path):
    """name -> sha256 of every file below `path`, and the names of its directories."""
    out = {}
    for root, dirs, files in os.walk(path):
        for d in dirs:
            out[os.path.relpath(os.path.join(root, d), path) + "/"] = "dir"
        for f in files:
            full = os.path.join(root, f)
            if os.path.islink(full):
                out[os.path.relpath(full, path)] = "link:" + os.readlink(full)
                continue
            with open(full, "rb") as fh:
                out[os.path.relpath(full, path)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def digest_device(device):
    with open(device, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Swapper(threading.Thread):
    """Waits for the phase directory `.stormark-*` in `target` (and, if `wait_for` is given,
    for that file inside it, or for it to reach `min_bytes`), then moves the phase
    directory away to `stash` and puts a symbolic link to `victim` in its place."""

    def __init__(self, target, victim, stash, wait_for=None, min_bytes=0, timeout=60):
        super().__init__(daemon=True)
        self.target, self.victim, self.stash = target, victim, stash
        self.wait_for, self.min_bytes, self.timeout = wait_for, min_bytes, timeout
        self.swapped = None
        self.stop = threading.Event()

    def run(self):
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline and not self.stop.is_set():
            for name in os.listdir(self.target):
                if not name.startswith(".stormark-"):
                    continue
                phase = os.path.join(self.target, name)
                if os.path.islink(phase):
                    continue
                if self.wait_for is not None:
                    inner = os.path.join(phase, self.wait_for)
                    try:
                        if os.path.getsize(inner) < self.min_bytes:
                            continue
                    except OSError:
                        continue
                try:
                    os.rename(phase, self.stash)
                    os.symlink(self.victim, phase)
                    self.swapped = phase
                    return
                except OSError:
                    continue
            time.sleep(0.001)


class FileSafetyTest(h.StormarkTestCase):

    def setUp(self):
        self.agent = self.start_agent("safety")
        self.target = self.agent.target_dir
        self.victim = os.path.join(self.make_dir("stormark-victim-"), "victim")
        os.mkdir(self.victim)
        for i in range(5):
            with open(os.path.join(self.victim, f"file{i}"), "wb") as f:
                f.write(os.urandom(4096 + i))
        # Names a workload would create, so that a write through the link would hit them.
        for name in ("bonnie.data", "randio.dat", "stream.dat", "1", "2", "3"):
            with open(os.path.join(self.victim, name), "wb") as f:
                f.write(b"do not touch " + name.encode())
        self.victim_digest = digest_tree(self.victim)

    def assert_victim_unchanged(self):
        self.assertEqual(digest_tree(self.victim), self.victim_digest)

    def run_phase(self, *args, expect=None, timeout=120):
        result = self.run_stormark(["run", "--agent", self.agent.address, "--target", "scratch",
                                    "--no-progress", *args], timeout=timeout)
        self.assert_no_crash(result)
        if expect is not None:
            self.assertEqual(result.returncode, expect, result.describe())
        return result

    def swap_during(self, stash_name, *args, wait_for=None, min_bytes=0):
        """Runs a phase while a Swapper attacks it; returns (result, swapper)."""
        stash = os.path.join(os.path.dirname(self.target), stash_name)
        swapper = Swapper(self.target, self.victim, stash, wait_for, min_bytes)
        swapper.start()
        result = self.run_phase(*args)
        swapper.stop.set()
        swapper.join(5)
        return result, swapper

    def assert_agent_still_serves(self):
        """A clean phase on the same target succeeds and leaves nothing behind."""
        for name in os.listdir(self.target):  # What the attacks left: the test's own links.
            path = os.path.join(self.target, name)
            if os.path.islink(path):
                os.unlink(path)
        result = self.run_phase("--workload", "stream", "--set", "size=4M", expect=0)
        self.assertIn("scratch", result.stdout)
        self.assertEqual([n for n in os.listdir(self.target) if n.startswith(".stormark-")], [])

    def assert_failed_clearly_or_unaffected(self, result, swapper):
        out = result.stdout + result.stderr
        if result.returncode != 0:
            # One line that names what it met, never a crash.
            self.assertRegex(out, r"symbolic link|not what this phase created|cleanup left|"
                                  r"was replaced as soon as it was made|"
                                  r"was moved away|No such file")
        elif swapper.swapped:
            # Unaffected: it worked in its own directory, and the user hears what stayed.
            self.assertIn("cleanup left", out)

    def test_bonnie_with_its_phase_directory_swapped_writes_nothing_outside(self):
        result, swapper = self.swap_during(
            "stash-bonnie", "--workload", "bonnie", "--set", "size=8M", "--set", "fast=true",
            "--set", "files=1:0:0:1")
        self.assertIsNotNone(swapper.swapped, "the swap never happened")
        self.assert_victim_unchanged()
        self.assert_failed_clearly_or_unaffected(result, swapper)
        self.assert_agent_still_serves()

    def test_postmark_with_its_phase_directory_swapped_mid_run_writes_nothing_outside(self):
        result, swapper = self.swap_during(
            "stash-postmark", "--workload", "postmark", "--set", "number=300",
            "--set", "transactions=20000", wait_for="1")
        self.assertIsNotNone(swapper.swapped, "the swap never happened")
        self.assert_victim_unchanged()
        self.assert_failed_clearly_or_unaffected(result, swapper)
        self.assert_agent_still_serves()

    def test_stream_read_with_its_phase_directory_swapped_during_the_layout(self):
        result, swapper = self.swap_during(
            "stash-stream", "--workload", "stream", "--set", "rw=read", "--set", "size=64M",
            wait_for="stream.dat", min_bytes=1)
        self.assertIsNotNone(swapper.swapped, "the swap never happened")
        self.assert_victim_unchanged()
        self.assert_failed_clearly_or_unaffected(result, swapper)
        self.assert_agent_still_serves()

    def test_a_target_that_is_a_symlink_is_refused_before_prepare(self):
        moved = self.target + ".real"
        os.rename(self.target, moved)
        os.symlink(self.victim, self.target)
        try:
            result = self.run_phase("--workload", "bonnie", "--set", "size=8M",
                                    "--set", "fast=true", expect=1)
            self.assertIn("is a symbolic link; the agent does not follow one to a target",
                          result.stdout + result.stderr)
            self.assert_victim_unchanged()
        finally:
            os.unlink(self.target)
            os.rename(moved, self.target)
        self.assert_agent_still_serves()

    def test_a_directory_above_the_target_swapped_for_a_symlink_is_refused(self):
        # The target's parent gives way to a link to a tree whose "target" is the victim: a
        # path opened by following it would put the phase's files among the victim's.
        base = os.path.dirname(self.target)
        decoy = self.make_dir("stormark-decoy-")
        # A real directory where the link leads: only a link above the target is followed.
        decoy_target = os.path.join(decoy, os.path.basename(self.target))
        shutil.copytree(self.victim, decoy_target)
        decoy_digest = digest_tree(decoy_target)
        moved = base + ".real"
        os.rename(base, moved)
        os.symlink(decoy, base)
        try:
            result = self.run_phase("--workload", "stream", "--set", "size=4M", expect=1)
            out = result.stdout + result.stderr
            self.assertRegex(out, r"target 'scratch': a directory above \S+ is a symbolic "
                                  r"link; the agent follows none to a target")
            self.assertEqual(digest_tree(decoy_target), decoy_digest)
            self.assertEqual(sorted(os.listdir(decoy_target)), sorted(os.listdir(self.victim)))
        finally:
            os.unlink(base)
            os.rename(moved, base)
        self.assert_agent_still_serves()

    @unittest.skipUnless(os.geteuid() == 0 and shutil.which("losetup") and
                         shutil.which("mkfs.ext4") and shutil.which("e2fsck"),
                         "needs root, losetup, mkfs.ext4 and e2fsck")
    def test_randio_file_swapped_for_a_block_device_during_the_layout(self):
        """The attack that wiped a filesystem: during randio's lay-out, its phase directory
        is replaced by one whose randio.dat is a link to a non-disposable ext4 device."""
        image = os.path.join(self.make_dir("stormark-loop-"), "ext4.img")
        with open(image, "wb") as f:
            f.truncate(32 * MIB)
        device = subprocess.run(["losetup", "-f", "--show", image], check=True,
                                capture_output=True, text=True).stdout.strip()
        self.addCleanup(subprocess.run, ["losetup", "-d", device], capture_output=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True, capture_output=True)
        before = digest_device(device)
        # The victim directory now holds the link to the device under randio's file name.
        os.unlink(os.path.join(self.victim, "randio.dat"))
        os.symlink(device, os.path.join(self.victim, "randio.dat"))
        self.victim_digest = digest_tree(self.victim)

        result, swapper = self.swap_during(
            "stash-randio", "--workload", "randio", "--set", "rw=randwrite",
            "--set", "size=16M", "--set", "runtime=2s", wait_for="randio.dat", min_bytes=1)
        self.assertIsNotNone(swapper.swapped, "the swap never happened")
        fsck = subprocess.run(["e2fsck", "-fn", device], capture_output=True, text=True)
        self.assertEqual(fsck.returncode, 0, fsck.stdout + fsck.stderr)
        self.assertEqual(digest_device(device), before)
        self.assert_victim_unchanged()
        self.assert_failed_clearly_or_unaffected(result, swapper)
        self.assert_agent_still_serves()


if __name__ == "__main__":
    h.main()
