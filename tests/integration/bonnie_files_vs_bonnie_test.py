"""bonnie's file tests against Debian's bonnie++ 2.00, side by side: create, stat and delete,
sequential and random, on a fresh ext4 (with a journal) on a loop device this test makes, same
directory, same parameters, alternately: bonnie++, ours, bonnie++, ours.

Why a journal: ext4 without one will not reuse an inode for 60 s after its file is deleted (300 s
while its table block is dirty), and every new file scans past such inodes, so a create after
deletions runs many times slower, and an alternating comparison pays for the other tool's last
run (docs/workloads/bonnie.md). The development VM's root filesystem has no journal: there, random
create read 7x apart between the tools; here it agrees.

The invocations (no data-file tests; 128 x 1024 empty files in one directory):
    bonnie++ -d DIR -s 0 -n 128 -u root -q
    stormark run --workload bonnie --dir DIR --set io=false --set files=128 --csv C

Measured on this VM (bench/bonnie_files_vs_bonnie.py --files 128 --repeat 5, on a journaled ext4
on a loop device, commit 4e27bc9, 2026-12-06), files/s, median (spread), stormark / bonnie++:
    seq_create  bonnie++ 58443 (1.25x)  ours 57039 (1.26x)  0.98
    seq_del     bonnie++ 47159 (1.14x)  ours 42106 (1.07x)  0.89
    ran_create  bonnie++ 57858 (1.08x)  ours 53294 (1.07x)  0.92
    ran_del     bonnie++ 37344 (1.11x)  ours 35110 (1.20x)  0.94
A second set of 5 an hour later, bonnie++ 40% faster (commit 7d69261): 0.85, 0.92, 0.90, 0.98,
spreads 1.05-1.38x; in this test's own 2 runs each, 0.77-0.89.
Both stat tests take under 0.5 s at this size (+++++ in both tools) and are only checked to be
too fast in both. Both tools make the same system calls per file now (perf trace -s: an open and
a close per create, a stat per stat, an unlink per delete); ours are openat2 and unlinkat below
the phase directory's descriptors where bonnie++ uses plain names below its working directory,
and ours look each name up in the phase's table of names.

FACTOR = 1.35: the medians (3 runs each) must be within 1.35x of each other, either way. That is
above the 1.18x of the 5-run medians and the 1.30x (0.77) of one 2-run median here (3 runs:
0.87-0.95, 62 s), and still fails a 2x error; the margin over 0.77 is thin, and the note on
issue 21 says so.

The data-file and per-character tests are compared in integration.memory_limited_agreement.
"""

import os
import statistics
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

BONNIE = next((p for p in ("/usr/sbin/bonnie++", "/usr/bin/bonnie++") if os.access(p, os.X_OK)),
              None)
FILES = "128"
ROUNDS = 3  # A median of 3: one run slowed by a neighbour does not decide it.
FACTOR = 1.35
FIELDS = {"seq_create": 26, "seq_stat": 28, "seq_del": 30,
          "ran_create": 32, "ran_stat": 34, "ran_del": 36}
TIMED = ("seq_create", "seq_del", "ran_create", "ran_del")
TOO_FAST = "+++++"


def rates(text, source):
    lines = [line for line in text.splitlines() if line.startswith("1.98,")]
    if len(lines) != 1:
        raise AssertionError(f"{source}: expected one bonnie++ CSV line:\n{text}")
    fields = lines[0].split(",")
    return {name: fields[i] for name, i in FIELDS.items()}


@unittest.skipUnless(BONNIE, "bonnie++ is not installed (scripts/install-deps.sh installs it)")
@unittest.skipUnless(os.geteuid() == 0, "needs root (losetup, mount)")
@unittest.skipUnless(net.have("losetup") and net.have("mkfs.ext4"), "needs losetup and mkfs.ext4")
class BonnieFilesVsBonnieTest(h.StormarkTestCase):

    def setUp(self):
        base = self.make_dir("stormark-itest-bonnie-files-")
        image = os.path.join(base, "disk.img")
        with open(image, "wb") as f:
            f.truncate(2 << 30)
        self.device = net.run("losetup", "-f", "--show", image).stdout.strip()
        self.addCleanup(net.run, "losetup", "-d", self.device, check=False)
        # 128 x 1024 files need more inodes than mkfs gives 2 GiB by default.
        net.run("mkfs.ext4", "-q", "-F", "-N", "400000", "-E",
                "lazy_itable_init=0,lazy_journal_init=0", self.device)
        self.mnt = os.path.join(base, "mnt")
        os.mkdir(self.mnt)
        net.run("mount", self.device, self.mnt)
        self.addCleanup(net.run, "umount", "-l", self.mnt, check=False)
        self.dir = os.path.join(self.mnt, "bench")
        os.mkdir(self.dir)
        self.out = self.make_dir()

    def theirs(self):
        done = subprocess.run([BONNIE, "-d", self.dir, "-s", "0", "-n", FILES, "-u", "root", "-q"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=300, preexec_fn=h._die_with_parent)
        self.assertEqual(done.returncode, 0, done.stderr)
        return rates(done.stdout, "bonnie++")

    def ours(self):
        csv = os.path.join(self.out, "ours.csv")
        result = self.run_stormark(["run", "--workload", "bonnie", "--dir", self.dir,
                                    "--set", "io=false", "--set", f"files={FILES}", "--csv", csv,
                                    "--no-db", "--no-progress"], timeout=300)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertNotIn("without a journal", result.stdout)  # This filesystem has one.
        self.assertEqual(os.listdir(self.dir), [], "our run left files behind")
        with open(csv) as f:
            return rates(f.read(), "stormark")

    def test_file_tests_agree_with_bonnie_plus_plus(self):
        theirs, ours = [], []
        for _ in range(ROUNDS):
            os.sync()
            theirs.append(self.theirs())
            os.sync()
            ours.append(self.ours())
        lines = [f"bonnie file tests vs bonnie++, {FILES} x 1024 files, {ROUNDS} rounds "
                 f"(files/s):"]
        ratios = {}
        for name in FIELDS:
            t = [r[name] for r in theirs]
            o = [r[name] for r in ours]
            if name not in TIMED:
                lines.append(f"  {name:10}  bonnie++ {t}  ours {o}")
                continue
            for figure in t + o:
                self.assertNotEqual(figure, TOO_FAST, f"{name} took under 0.5 s: raise FILES")
            ratios[name] = statistics.median(map(float, o)) / statistics.median(map(float, t))
            lines.append(f"  {name:10}  bonnie++ {t}  ours {o}  ours/bonnie++ {ratios[name]:.2f}")
        summary = "\n".join(lines)
        print(summary, file=sys.stderr)
        for name, ratio in ratios.items():
            self.assertLessEqual(ratio, FACTOR, f"{name}: ours too high\n{summary}")
            self.assertGreaterEqual(ratio, 1 / FACTOR, f"{name}: ours too low\n{summary}")


if __name__ == "__main__":
    h.main()
