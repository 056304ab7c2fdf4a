"""A block target whose path changes under the agent, on loop devices this test creates.

The attack: a target's path (a symlink, as /dev/disk/by-id/ links are) re-pointed between the
agent's check of the device and its use, so that writes meant for a disposable device land on
another one. Here the other one is a loop device holding ext4 that no config marks disposable
(the "victim"). Whatever each phase does (it may succeed on the disposable device, or fail with
one clear line), the victim must still pass `e2fsck -fn` with its checksum unchanged, and the
agent must still serve the next phase.

Every device here is a loop device attached by this test to a file in a directory it made;
each is detached in cleanup, also when a test fails, after the agent and the process that
re-points the links (both started by this test, stopped by PID) are gone. Needs root, losetup,
mkfs.ext4 and e2fsck; skipped without them."""

import hashlib
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20

# What a phase may say when the path led elsewhere than it should: the identity check, or an
# interlock refusing the device the path led to when the phase began.
CLEAR_REFUSALS = (
    "as when this phase resolved it; refusing to use it",
    "holds data: ext4 filesystem; refusing to write",
    "cannot create",
)

# Re-points argv[1] at argv[2], argv[3], ... in turn, as fast as it can, by an atomic rename
# of a fresh symlink over it (the path never goes missing). With "--and-remove", the link is
# removed after each re-pointing too (the path of a block file not created yet).
SWAPPER = r"""
import os, sys
link, targets = sys.argv[1], [t for t in sys.argv[2:] if t != "--and-remove"]
remove = "--and-remove" in sys.argv
tmp = link + ".swap"
i = 0
while True:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    os.symlink(targets[i % len(targets)], tmp)
    os.replace(tmp, link)
    if remove:
        try:
            os.unlink(link)
        except FileNotFoundError:
            pass
    i += 1
"""


def have(tool):
    return shutil.which(tool) is not None


def run(*argv):
    return subprocess.run(list(argv), check=True, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL).stdout.strip()


def checksum(device):
    digest = hashlib.sha256()
    with open(device, "rb") as f:
        for chunk in iter(lambda: f.read(MIB), b""):
            digest.update(chunk)
    return digest.hexdigest()


def point(link, target):
    """Re-points `link` at `target` atomically."""
    tmp = link + ".new"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(target, tmp)
    os.replace(tmp, link)


@unittest.skipUnless(os.geteuid() == 0 and all(map(have, ("losetup", "mkfs.ext4", "e2fsck"))),
                     "needs root, losetup, mkfs.ext4 and e2fsck")
class BlockIdentityTest(h.StormarkTestCase):

    def loop_device(self, size=32 * MIB):
        """A loop device on a new sparse file of `size` bytes."""
        path = os.path.join(self.make_dir("stormark-loop-"), "backing.img")
        with open(path, "wb") as f:
            f.truncate(size)
        device = run("losetup", "-f", "--show", path)
        self.assertTrue(device.startswith("/dev/loop"), device)
        self.addCleanup(subprocess.run, ["losetup", "-d", device], capture_output=True)
        return device

    def victim(self):
        """A loop device holding ext4 with a file on it; returns (device, its checksum)."""
        device = self.loop_device()
        run("mkfs.ext4", "-q", "-F", device)
        # A file's worth of data, written without mounting anything.
        data = os.path.join(self.make_dir(), "data")
        with open(data, "wb") as f:
            f.write(os.urandom(MIB))
        if have("debugfs"):
            run("debugfs", "-w", "-R", f"write {data} precious", device)
        subprocess.run(["blockdev", "--flushbufs", device], capture_output=True)
        return device, checksum(device)

    def assert_intact(self, device, expected):
        fsck = subprocess.run(["e2fsck", "-fn", device], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
        self.assertEqual(fsck.returncode, 0, f"e2fsck -fn {device}:\n{fsck.stdout}{fsck.stderr}")
        self.assertEqual(checksum(device), expected, f"{device} was written")

    def start_swapper(self, link, *targets):
        proc = subprocess.Popen([sys.executable, "-c", SWAPPER, link] + list(targets),
                                stdin=subprocess.DEVNULL, preexec_fn=h._die_with_parent)
        self.addCleanup(h._stop_process, proc)
        time.sleep(0.1)
        self.assertIsNone(proc.poll(), "the swapper died")
        return proc

    def phase(self, agent, target, args):
        """Runs one phase; returns (exit code, its result row)."""
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(["run", "--agent", agent.address, "--target", target,
                                    "--json", json_path, "--no-progress", "--no-db"] + args,
                                   timeout=240)
        self.assert_no_crash(result)
        row = self.load_json(json_path)["phases"][0]["results"][0]
        if result.returncode == 0:
            self.assertEqual(row["status"], "succeeded", row)
        else:
            self.assertEqual(result.returncode, 1, result.describe())
        return result.returncode, row

    def assert_clear_refusal(self, row):
        """The row failed with one line naming the target and one of CLEAR_REFUSALS; returns
        which."""
        error = row["error"]
        self.assertNotIn("\n", error.strip(), "one line")
        self.assertIn("target '", error)
        said = [text for text in CLEAR_REFUSALS if text in error]
        self.assertTrue(said, row)
        return said[0]

    PHASES = (
        ["--workload", "randio", "--set", "rw=randwrite", "--set", "size=4M"],
        ["--rw", "write", "--size", "8M"],
        ["--rw", "read", "--size", "8M"],  # Lays its data out first.
        ["--workload", "randio", "--set", "rw=randrw", "--set", "size=4M",
         "--set", "verify=true"],
        ["--rw", "write", "--size", "4M", "--direct"],
    )

    def test_a_link_re_pointed_during_phases_never_leads_a_write_to_another_device(self):
        disposable = self.loop_device()
        victim, before = self.victim()
        link = os.path.join(self.make_dir("stormark-by-id-"), "wwn-0x5000c500a1b2c3d4")
        os.symlink(disposable, link)
        agent = self.start_agent("identity", extra_targets=(
            f"  disk: {{block: {link}, disposable: true}}\n"
            f"  victim: {{block: {victim}}}\n"))
        swapper = self.start_swapper(link, disposable, victim)
        outcomes = {"succeeded": 0}
        for _ in range(3):
            for args in self.PHASES:
                code, row = self.phase(agent, "disk", args)
                if code == 0:
                    outcomes["succeeded"] += 1
                else:
                    said = self.assert_clear_refusal(row)
                    outcomes[said] = outcomes.get(said, 0) + 1
        h._stop_process(swapper)
        print(f"\n  re-pointed link: {outcomes}", file=sys.stderr)
        self.assert_intact(victim, before)
        # The link back where it belongs: the agent serves the next phase as if nothing happened.
        point(link, disposable)
        code, row = self.phase(agent, "disk", ["--rw", "write", "--size", "8M"])
        self.assertEqual(code, 0, row)
        self.assertIn(link, row["resolved"]["device"])

    def test_tuning_reaches_the_device_the_link_led_to_and_is_put_back(self):
        disposable = self.loop_device()
        queue = f"/sys/block/{os.path.basename(disposable)}/queue/read_ahead_kb"
        link = os.path.join(self.make_dir("stormark-by-id-"), "wwn-0x5000c500a1b2c3d5")
        os.symlink(disposable, link)
        agent = self.start_agent("identity-tuning", extra_config="allow_tuning: true\n",
                                 extra_targets=f"  disk: {{block: {link}, disposable: true}}\n")
        before = h.read_text(queue).strip()
        wanted = "1024" if before != "1024" else "512"
        code, row = self.phase(agent, "disk", ["--workload", "randio", "--set", "rw=randread",
                                               "--set", "size=4M",
                                               "--set", f"read_ahead_kb={wanted}"])
        self.assertEqual(code, 0, row)
        self.assertEqual(row["tuning"]["read_ahead_kb"], wanted, row)
        self.assertEqual(row["tuning"]["read_ahead_kb.before"], before, row)
        self.assertEqual(h.read_text(queue).strip(), before, "put back after the phase")

    def test_a_block_file_replaced_by_a_link_to_a_device_between_phases_is_refused(self):
        victim, before = self.victim()
        base = self.make_dir("stormark-img-")
        image = os.path.join(base, "disk.img")
        agent = self.start_agent("identity-file", extra_targets=(
            f"  img: {{block: {image}, size: 16M, disposable: true}}\n"))
        code, row = self.phase(agent, "img", ["--rw", "write", "--size", "8M", "--fdatasync"])
        self.assertEqual(code, 0, row)
        # Between phases, the file gives way to a link to the victim.
        point(image, victim)
        for args in self.PHASES:
            code, row = self.phase(agent, "img", args)
            self.assertEqual(code, 1, row)
            self.assert_clear_refusal(row)
            self.assertIn("holds data: ext4 filesystem", row["error"])
            # What the earlier phase wrote was on the file, not on the device now there.
            self.assertFalse([w for w in row["warnings"] if w.startswith("no layout")], row)
        self.assert_intact(victim, before)
        # A file in its place again: the next phase runs.
        os.unlink(image)
        code, row = self.phase(agent, "img", ["--rw", "read", "--size", "8M"])
        self.assertEqual(code, 0, row)
        self.assertTrue([w for w in row["warnings"] if w.startswith(f"created {image}")], row)

    def test_a_block_file_being_created_is_never_swapped_for_a_device(self):
        victim, before = self.victim()
        base = self.make_dir("stormark-new-")
        image = os.path.join(base, "new.img")
        agent = self.start_agent("identity-new", extra_targets=(
            f"  new: {{block: {image}, size: 8M, disposable: true}}\n"))
        # The path appears as a link to the victim and goes again, over and over: whenever
        # the agent finds it missing it creates the file, which the link may then replace.
        swapper = self.start_swapper(image, victim, "--and-remove")
        outcomes = {"succeeded": 0, "refused": 0}
        for _ in range(6):
            code, row = self.phase(agent, "new", ["--rw", "read", "--size", "8M"])
            if code == 0:
                outcomes["succeeded"] += 1
            else:
                outcomes["refused"] += 1
                error = row["error"]
                self.assertNotIn("\n", error.strip(), "one line")
                self.assertIn("target 'new'", error)
        h._stop_process(swapper)
        print(f"\n  block file being created: {outcomes}", file=sys.stderr)
        self.assert_intact(victim, before)
        if os.path.lexists(image):
            os.unlink(image)
        code, row = self.phase(agent, "new", ["--rw", "read", "--size", "8M"])
        self.assertEqual(code, 0, row)


if __name__ == "__main__":
    h.main()
